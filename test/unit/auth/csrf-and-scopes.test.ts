import t from 'tap';
import { SecretBox } from '../../../src/core/crypto.js';
import { issueCsrfToken, verifyCsrfToken, CSRF_TTL_SECONDS } from '../../../src/auth/csrf.js';
import { ALL_SCOPES, grants, isKnownScope, ROLE_SCOPES } from '../../../src/auth/scopes.js';

t.test('CSRF tokens are tenant-bound, signed and expire after two hours', async (t) => {
  const box = new SecretBox('k');
  const now = new Date('2026-11-22T09:00:00.000Z');
  const { token, expiresAt } = issueCsrfToken(box, 'tenant-a', now);
  t.equal(expiresAt.getTime() - now.getTime(), CSRF_TTL_SECONDS * 1000);
  t.ok(verifyCsrfToken(box, token, 'tenant-a', now));
  t.notOk(verifyCsrfToken(box, token, 'tenant-b', now), 'other tenant');
  t.notOk(verifyCsrfToken(box, token, 'tenant-a', new Date(expiresAt.getTime() + 1000)), 'expired');
  t.notOk(verifyCsrfToken(new SecretBox('other'), token, 'tenant-a', now), 'other server key');
  const [payload, mac] = token.split('.');
  const forged = Buffer.from(JSON.stringify({ t: 'tenant-b', e: 9e9, n: 'x' })).toString('base64url');
  t.notOk(verifyCsrfToken(box, `${forged}.${mac}`, 'tenant-b', now), 'payload swapped under the old MAC');
  t.notOk(verifyCsrfToken(box, `${payload}.${mac}x`, 'tenant-a', now));
  t.notOk(verifyCsrfToken(box, undefined, 'tenant-a', now));
  t.notOk(verifyCsrfToken(box, 'garbage', 'tenant-a', now));
});

t.test('scope grants', async (t) => {
  t.ok(grants(['admin'], 'users:write'));
  t.ok(grants(['tickets:*'], 'tickets:delete'));
  t.notOk(grants(['tickets:*'], 'users:read'));
  t.notOk(grants(['users:read'], 'users:write'));
  t.ok(isKnownScope('webhook_endpoints:delete'));
  t.ok(isKnownScope('tickets:*'));
  t.notOk(isKnownScope('tickets:destroy'));
  t.notOk(isKnownScope('nonsense:*'));
  t.ok(ALL_SCOPES.includes('osticket_import:write'));
  for (const scope of [...ROLE_SCOPES.agent, ...ROLE_SCOPES.customer]) t.ok(isKnownScope(scope), scope);
  t.notOk(grants(ROLE_SCOPES.customer, 'users:read'), 'customers cannot list users');
  t.notOk(grants(ROLE_SCOPES.agent, 'users:write'), 'agents cannot change users');
});
