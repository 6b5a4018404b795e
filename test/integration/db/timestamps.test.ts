import t from 'tap';
import { createDb } from '../../../src/db/connection.js';

/**
 * timestamptz values read through our connections (src/db/timestamp-parser.ts) are the instants
 * PostgreSQL holds, whatever the session's time zone makes it print: whole-hour offsets, half and
 * three-quarter hours, the seconds of historical local mean times, no fraction or six digits of it,
 * and infinity.
 */
t.test('timestamptz values read back as the instants the server holds', async (t) => {
  const db = createDb(process.env.HELPDESK_TEST_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres', { max: 1 });
  t.teardown(() => db.destroy());
  const instants = [
    "now()", "'2026-11-29 10:36:38.123456+00'", "'2026-11-29 10:36:38+00'", "'2026-03-29 01:30:00.5+00'",
    "'1900-01-01 00:00:00.000001+00'", "'1850-06-01 12:00:00+00'", "'0050-06-01 12:00:00+00'", "'9999-12-31 23:59:59.999999+00'",
  ];
  for (const zone of ['UTC', 'Asia/Kathmandu', 'America/St_Johns', 'Europe/Amsterdam', 'Pacific/Kiritimati', 'America/Los_Angeles']) {
    await db.transaction(async (trx) => {
      await trx.raw(`set local time zone '${zone}'`);
      for (const instant of instants) {
        const row = (await trx.raw(`select ${instant}::timestamptz as at, ${instant}::timestamptz::text as text,
          floor(extract(epoch from ${instant}::timestamptz) * 1000)::bigint::text as ms`)).rows[0];
        t.ok(row.at instanceof Date, `${zone} ${row.text}: a Date`);
        t.equal(row.at.getTime(), Number(row.ms), `${zone} ${row.text}`);
      }
      const infinite = (await trx.raw(`select 'infinity'::timestamptz as up, '-infinity'::timestamptz as down`)).rows[0];
      t.same([infinite.up, infinite.down], [Infinity, -Infinity], `${zone}: infinity as pg reads it`);
    });
  }
});
