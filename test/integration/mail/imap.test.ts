import t from 'tap';
import { ImapFlow } from 'imapflow';
import { runJob } from '../../../src/jobs/runner.js';
import { call, testApp, tenantFixture } from '../../helpers/app.js';
import { dovecotMissing, startDovecot, type Dovecot } from '../../helpers/dovecot.js';
import { compose } from '../../helpers/mail.js';

/** The mail-fetch job against a real IMAP server (Dovecot): UIDs, resume, UIDVALIDITY, isolation of failures. */

const skip = dovecotMissing();

async function mailbox(server: Dovecot, user: string, fn: (client: ImapFlow) => Promise<void>) {
  const client = new ImapFlow({ host: server.host, port: server.port, secure: false, doSTARTTLS: false, auth: { user, pass: server.users[user]! }, logger: false });
  await client.connect();
  try {
    await fn(client);
  } finally {
    await client.logout();
  }
}

t.test('mail-fetch', { skip }, async (t) => {
  const server = await startDovecot(t, { alpha: 'alpha-pass', beta: 'beta-pass' });
  const env = await testApp(t, { webhooksAllowPrivate: true });
  const a = await tenantFixture(env);
  const b = await tenantFixture(env);
  const broken = await tenantFixture(env);
  const imap = (user: string, extra: Record<string, unknown> = {}) => ({ host: server.host, port: server.port, security: 'none', username: user, password: server.users[user] ?? 'wrong', ...extra });
  await mailbox(server, 'alpha', (c) => c.mailboxCreate('Support').then(() => undefined));
  t.equal((await call(env, 'POST', '/mail-settings', { token: a.admin.token, body: { imap: imap('alpha', { mailbox: 'Support' }) } })).statusCode, 200);
  t.equal((await call(env, 'POST', '/mail-settings', { token: b.admin.token, body: { imap: imap('beta', { delete_after_import: true }) } })).statusCode, 200);
  t.equal((await call(env, 'POST', '/mail-settings', { token: broken.admin.token, body: { imap: { ...imap('beta'), password: 'not-the-password' } } })).statusCode, 200);
  const tickets = async (tenantId: string) => env.deps.db('tickets').where({ tenant_id: tenantId }).orderBy('ticket_number').pluck('subject');
  let now = new Date();
  const tick = () => {
    now = new Date(now.getTime() + 61_000);
    return now;
  };

  await t.test('test-imap logs in for real', async (t) => {
    t.same((await call(env, 'POST', '/mail-settings/test-imap', { token: a.admin.token })).json(), { ok: true });
    const res = (await call(env, 'POST', '/mail-settings/test-imap', { token: broken.admin.token })).json();
    t.equal(res.ok, false);
    t.ok(res.error);
  });

  await t.test('new messages become tickets; a broken mailbox is recorded and does not stop the others', async (t) => {
    await mailbox(server, 'alpha', async (c) => {
      await c.append('Support', await compose({ from: 'one@customer.example', subject: 'First', text: 'one' }));
      await c.append('Support', await compose({ from: 'two@customer.example', subject: 'Second', text: 'two' }));
    });
    await mailbox(server, 'beta', async (c) => {
      await c.append('INBOX', await compose({ from: 'three@customer.example', subject: 'Third', text: 'three' }));
    });
    const run = await runJob(env.deps, 'mail-fetch', { now: tick() });
    t.match(run, { status: 'succeeded', result: { tenants: 3, imported: 3, failed_tenants: 1 } });
    t.same(await tickets(a.id), ['First', 'Second']);
    t.same(await tickets(b.id), ['Third']);
    const state = (await call(env, 'GET', '/mail-settings', { token: broken.admin.token })).json().imap;
    t.ok(state.last_error, 'the broken mailbox says why');
    t.ok(state.last_polled_at);
    await mailbox(server, 'beta', async (c) => {
      const box = await c.mailboxOpen('INBOX');
      t.equal(box.exists, 0, 'delete_after_import removed the imported message');
    });
  });

  await t.test('resumes after the last UID; nothing is imported twice', async (t) => {
    let run = await runJob(env.deps, 'mail-fetch', { now: new Date(now.getTime() + 1000) });
    t.match(run.result, { tenants: 0 }, 'not due before the poll interval');
    await mailbox(server, 'alpha', async (c) => {
      await c.append('Support', await compose({ from: 'four@customer.example', subject: 'Fourth', text: 'four' }));
    });
    run = await runJob(env.deps, 'mail-fetch', { now: tick() });
    t.match(run.result, { imported: 1 });
    t.same(await tickets(a.id), ['First', 'Second', 'Fourth']);
    const row = await env.deps.db('mail_settings').where({ tenant_id: a.id }).first();
    t.equal(Number(row.imap_last_uid), 3);
  });

  await t.test('a new UIDVALIDITY re-reads the mailbox without duplicating tickets', async (t) => {
    const before = await env.deps.db('mail_settings').where({ tenant_id: a.id }).first();
    await mailbox(server, 'alpha', async (c) => {
      const old: Buffer[] = [];
      await c.mailboxOpen('Support');
      for await (const m of c.fetch('1:*', { source: true }, { uid: true })) {
        if (m.source) old.push(m.source);
      }
      await c.mailboxClose().catch(() => undefined);
      await c.mailboxDelete('Support');
      await new Promise((r) => setTimeout(r, 1100)); // Dovecot derives UIDVALIDITY from the clock
      await c.mailboxCreate('Support');
      for (const source of old) await c.append('Support', source);
      await c.append('Support', await compose({ from: 'five@customer.example', subject: 'Fifth', text: 'five' }));
    });
    const run = await runJob(env.deps, 'mail-fetch', { now: tick() });
    t.match(run.result, { imported: 1, ignored: 3 });
    t.same(await tickets(a.id), ['First', 'Second', 'Fourth', 'Fifth']);
    const after = await env.deps.db('mail_settings').where({ tenant_id: a.id }).first();
    t.not(after.imap_uid_validity, before.imap_uid_validity);
    t.equal(Number(after.imap_last_uid), 4);
  });
});
