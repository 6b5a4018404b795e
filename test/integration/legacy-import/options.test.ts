import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testApp, tenantFixture } from '../../helpers/app.js';
import { osticketDb, osticketMissing } from '../../helpers/osticket.js';
import { CLI_ACTOR } from '../../../src/core/context.js';
import { runLegacyImport } from '../../../src/legacy-import/writer.js';
import { wallTimeToDate } from '../../../src/legacy-import/source.js';

t.test('source time zone, other ticket-form fields, filesystem attachments', { skip: osticketMissing }, async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const source = osticketDb(t);
  const db = env.deps.db;
  // A ticket-form field beyond subject and priority, answered on ticket 1 (its form entry is 9).
  source.sql(`INSERT INTO ost_form_field (id, form_id, flags, type, label, name, sort, created, updated)
    VALUES (40, 2, 1, 'text', 'Serial number', 'serial', 5, NOW(), NOW());
    INSERT INTO ost_form_entry_values (entry_id, field_id, value) VALUES (9, 40, 'SN-123');`);
  // The attachment moves to the filesystem backend: osTicket's <dir>/<first letter of key>/<key>.
  const bytes = Buffer.from(source.sql('SELECT HEX(filedata) FROM ost_file_chunk WHERE file_id = 3').trim(), 'hex');
  const key = source.sql('SELECT `key` FROM ost_file WHERE id = 3').trim();
  source.sql("UPDATE ost_file SET bk = 'F' WHERE id = 3; DELETE FROM ost_file_chunk WHERE file_id = 3;");
  const dir = mkdtempSync(join(tmpdir(), 'ost-uploads-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, key.slice(0, 1)));
  writeFileSync(join(dir, key.slice(0, 1), key), bytes);

  const withoutDir = await runLegacyImport(env.deps, tenant.id, CLI_ACTOR, new Date(), { source: source.dsn, timezone: 'Europe/Berlin', dryRun: true });
  t.match(withoutDir.errors, [{ kind: 'attachment', legacy_id: '13', message: /filesystem/ }], 'a filesystem file without the directory is reported');

  const result = await runLegacyImport(env.deps, tenant.id, CLI_ACTOR, new Date(), { source: source.dsn, timezone: 'Europe/Berlin', attachmentsDir: dir });
  t.same(result.errors, []);
  t.equal(result.counts.attachments, 1);
  const ticket = await db('tickets').where({ tenant_id: tenant.id, subject: 'Cannot log in to the customer portal' }).first();
  t.equal(ticket.created_at.toISOString(), '2024-02-01T07:15:00.000Z', 'read as Berlin time (UTC+1 in February)');
  t.same(ticket.custom_fields, { osticket_serial: 'SN-123' });
  const field = await db('custom_fields').where({ tenant_id: tenant.id, key: 'osticket_serial' }).first();
  t.match(field, { kind: 'text', label: 'Serial number' });
  const file = await db('attachments').where({ tenant_id: tenant.id }).first();
  t.equal(file.sha256, createHash('sha256').update(bytes).digest('hex'));
});

t.test('ticket numbers: kept when numeric and unique, else drawn above the largest kept one', { skip: osticketMissing }, async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const source = osticketDb(t);
  source.sql("UPDATE ost_ticket SET number = '777' WHERE ticket_id IN (1, 2); UPDATE ost_ticket SET number = 'A-12' WHERE ticket_id = 3; UPDATE ost_ticket SET number = '900000' WHERE ticket_id = 4;");
  const result = await runLegacyImport(env.deps, tenant.id, CLI_ACTOR, new Date(), { source: source.dsn, batchSize: 3 });
  t.same(result.errors, []);
  const tickets = await env.deps.db('tickets').where({ tenant_id: tenant.id }).orderBy('created_at').select('ticket_number');
  const [one, two, three, four] = tickets.map((x) => x.ticket_number);
  t.equal(one, 777, 'the first holder keeps its number');
  t.equal(four, 900000);
  const max = Math.max(...tickets.map((x) => x.ticket_number).filter((n) => n !== two && n !== three));
  t.ok(two > 900000 && three > 900000 && two !== three, `drawn numbers continue the sequence (${two}, ${three}, largest kept ${max})`);
  t.equal(new Set(tickets.map((x) => x.ticket_number)).size, tickets.length, 'all distinct');
});

t.test('wall times in a zone, across daylight saving; zero dates are null', { skip: osticketMissing }, async (t) => {
  t.equal(wallTimeToDate('2024-07-01 12:00:00', 'Europe/Berlin')!.toISOString(), '2024-07-01T10:00:00.000Z');
  t.equal(wallTimeToDate('2024-01-01 12:00:00', 'America/New_York')!.toISOString(), '2024-01-01T17:00:00.000Z');
  t.equal(wallTimeToDate('2024-03-31 03:30:00', 'Europe/Berlin')!.toISOString(), '2024-03-31T01:30:00.000Z');
  t.equal(wallTimeToDate('0000-00-00 00:00:00', 'UTC'), null);
  t.equal(wallTimeToDate(null, 'UTC'), null);
  t.equal(wallTimeToDate('2024-02-01 08:15:00', 'UTC')!.toISOString(), '2024-02-01T08:15:00.000Z');
});
