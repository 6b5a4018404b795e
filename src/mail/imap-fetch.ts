import type { Deps } from '../core/context.js';
import { connectImap } from './imap-client.js';
import { receiveInbound } from './inbound.js';
import type { MailSettingsRow } from './settings-store.js';

/**
 * The `mail-fetch` job: polls each tenant's IMAP mailbox that is due (its poll interval passed)
 * and feeds every new message through the same `receiveInbound` as the inbound route.
 * - UID based: messages with a UID above the stored `imap_last_uid` are fetched in UID order, and
 *   the resume point advances after each message is committed, so a crash or restart resumes at
 *   the next message (a message imported twice is caught by its Message-ID).
 * - A changed UIDVALIDITY means the UIDs were renumbered: the mailbox is read again from its
 *   start, and Message-IDs keep that from creating duplicates.
 * - Each tenant is polled on its own (four at a time), with short network time-outs, and a failure
 *   is recorded in `imap_error` and logged: one broken mailbox never stalls another.
 */
const MAX_PER_RUN = 200;

interface Totals { tenants: number; imported: number; ignored: number; failed_tenants: number }

async function dueMailboxes(deps: Deps, now: Date): Promise<MailSettingsRow[]> {
  return deps.db<MailSettingsRow>('mail_settings')
    .whereNotNull('imap_host')
    .where((w) => w.whereNull('imap_polled_at')
      .orWhereRaw("imap_polled_at + make_interval(secs => poll_interval_seconds) <= ?", [now]))
    .comment('cross-tenant: the mail-fetch job polls every tenant\'s mailbox');
}

async function setState(deps: Deps, tenantId: string, columns: Partial<MailSettingsRow>): Promise<void> {
  await deps.db('mail_settings').where({ tenant_id: tenantId }).update(columns);
}

/** Polls one mailbox; answers how many messages were imported and ignored. */
export async function pollMailbox(deps: Deps, settings: MailSettingsRow, now: Date): Promise<{ imported: number; ignored: number }> {
  const client = await connectImap(deps, settings);
  let imported = 0;
  let ignored = 0;
  try {
    const mailbox = await client.mailboxOpen(settings.imap_mailbox);
    const validity = String(mailbox.uidValidity);
    let lastUid = Number(settings.imap_last_uid);
    if (settings.imap_uid_validity !== validity) {
      lastUid = 0;
      await setState(deps, settings.tenant_id, { imap_uid_validity: validity, imap_last_uid: '0' });
    }
    if (mailbox.exists === 0) return { imported, ignored };
    const uids = ((await client.search({ uid: `${lastUid + 1}:*` }, { uid: true })) || [])
      .filter((uid) => uid > lastUid).sort((a, b) => a - b).slice(0, MAX_PER_RUN);
    for (const uid of uids) {
      const message = await client.fetchOne(String(uid), { source: true }, { uid: true });
      if (message && message.source) {
        const answer = await receiveInbound(deps, settings.tenant_id, message.source, now);
        if (answer.ignored) ignored += 1;
        else imported += 1;
      }
      await setState(deps, settings.tenant_id, { imap_last_uid: String(uid) });
      if (settings.delete_after_import) await client.messageDelete(String(uid), { uid: true });
    }
  } finally {
    await client.logout().catch(() => client.close());
  }
  return { imported, ignored };
}

/** Mailboxes polled at once: a slow or hanging server holds up its own slot only. */
const PARALLEL = 4;

export async function fetchMail(deps: Deps, now: Date): Promise<Totals> {
  const totals: Totals = { tenants: 0, imported: 0, ignored: 0, failed_tenants: 0 };
  const queue = await dueMailboxes(deps, now);
  const worker = async () => {
    for (let settings = queue.shift(); settings; settings = queue.shift()) await pollOne(deps, settings, now, totals);
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return totals;
}

async function pollOne(deps: Deps, settings: MailSettingsRow, now: Date, totals: Totals): Promise<void> {
  {
    totals.tenants += 1;
    try {
      const result = await pollMailbox(deps, settings, now);
      totals.imported += result.imported;
      totals.ignored += result.ignored;
      await setState(deps, settings.tenant_id, { imap_polled_at: now, imap_error: null });
    } catch (error) {
      totals.failed_tenants += 1;
      const message = error instanceof Error ? error.message : String(error);
      deps.log.warn({ tenant_id: settings.tenant_id, err: error }, 'mail-fetch: mailbox failed');
      await setState(deps, settings.tenant_id, { imap_polled_at: now, imap_error: message.slice(0, 1000) });
    }
  }
}
