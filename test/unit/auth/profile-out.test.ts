import t from 'tap';
import { profileOut } from '../../../src/auth/profile.js';
import { UserRecord } from '../../../src/directory/models.js';

/** A user row as the credential cache shares it between requests: frozen. */
function row(changes: Record<string, unknown> = {}): UserRecord {
  return Object.freeze(UserRecord.fromJson({
    id: '0190a0b0-0000-7000-8000-000000000001', tenant_id: '0190a0b0-0000-7000-8000-0000000000aa',
    email: 'bea@example.com', name: 'Bea', role: 'customer', active: true, timezone: null, locale: null,
    created_at: new Date('2026-12-01T10:00:00Z'), updated_at: new Date('2026-12-01T10:00:00Z'),
    notification_preferences: { email: false }, ...changes,
  }, { skipValidation: true }));
}

t.test('a row\'s profile is built once and shared, frozen; a changed row gets its own', async (t) => {
  const first = row();
  const profile = profileOut(first);
  t.match(profile, { name: 'Bea', timezone: null, created_at: '2026-12-01T10:00:00.000Z', notification_preferences: { email: false, push: true } });
  t.equal(profileOut(first), profile, 'the same row object answers the same profile');
  t.ok(Object.isFrozen(profile), 'shared between requests, so nobody may change it');

  const changed = row({ timezone: 'Europe/Berlin', updated_at: new Date('2026-12-01T11:00:00Z') });
  const after = profileOut(changed);
  t.not(after, profile);
  t.match(after, { timezone: 'Europe/Berlin', updated_at: '2026-12-01T11:00:00.000Z' }, 'the new row\'s values, not the kept profile\'s');
  t.equal(profile.timezone, null, 'the earlier profile is unchanged');
});

t.test('a row that is not frozen (read for one call, and may still change) is never kept', async (t) => {
  const fresh = UserRecord.fromJson({ ...row(), name: 'Bea' }, { skipValidation: true });
  const profile = profileOut(fresh);
  fresh.name = 'Beatriz';
  t.equal(profileOut(fresh).name, 'Beatriz', 'built again from the row as it is now');
  t.equal(profile.name, 'Bea');
});
