import t from 'tap';
import { AppError, ERROR_TABLE, errors, exitCodeFor } from '../../../src/core/errors.js';

t.test('every factory error carries the status of its code', async (t) => {
  const samples = [
    errors.notFound('ticket', 'abc'), errors.tenantNotFound(), errors.unauthenticated(), errors.invalidCredentials(),
    errors.insufficientScope('users:read'), errors.forbidden(), errors.csrfInvalid(), errors.featureNotLicensed('api_keys'),
    errors.conflict('x'), errors.alreadyExists('user', 'email', 'a@b.c'), errors.invalid('f', 'is bad'),
    errors.rateLimited(3), errors.notReady(), errors.internal(), errors.replyLocked({ id: 'u', name: 'Ann' }, '2030-01-01T00:00:00.000Z'),
  ];
  for (const e of samples) t.equal(e.status, ERROR_TABLE[e.code], e.code);
  t.equal(errors.notFound('ticket', 'abc').message, 'Ticket abc does not exist');
  t.same(errors.insufficientScope('users:read').details, { required_scope: 'users:read' });
  t.same(errors.featureNotLicensed('api_keys').details, { feature: 'api_keys' });
  t.equal(errors.rateLimited(2.2).headers?.['Retry-After'], '3');
});

t.test('CLI exit codes by error class', async (t) => {
  t.equal(exitCodeFor(new Error('x')), 1);
  t.equal(exitCodeFor(errors.invalid('a', 'b')), 2);
  t.equal(exitCodeFor(errors.notFound('user')), 3);
  t.equal(exitCodeFor(errors.unauthenticated()), 4);
  t.equal(exitCodeFor(errors.alreadyExists('tenant', 'slug', 'x')), 5);
  t.equal(exitCodeFor(new AppError('not_ready', 'x')), 6);
  t.equal(exitCodeFor(errors.internal()), 1);
});
