import type { Knex } from 'knex';
import type { Deps } from '../core/context.js';
import type { NotificationRecord } from './models.js';
import { loadMailSettings } from './settings-store.js';
import { smtpTargetFor, type SmtpTarget } from './transports.js';

/**
 * The sender behind the `mail-send` job (and the nudge right after a commit): claims due rows of
 * the outbox with FOR UPDATE SKIP LOCKED, so two daemons never send one row twice, sends each
 * through its tenant's transport, and records the outcome. A failure retries after 1, 5 and 30
 * minutes; the fourth failure marks the row `failed`. At-least-once: a crash between the SMTP
 * answer and the commit sends that mail again.
 */
export const RETRY_MINUTES = [1, 5, 30] as const;
const BATCH = 50;

export interface SendFilter { tenantId?: string; ids?: string[] }

/**
 * The thread's head: when the ticket came by mail, the customer's own first Message-ID goes
 * before our root id. Looked up at send time because the ticket of an inbound mail is known only
 * once the create that notifies has returned.
 */
async function threadOf(trx: Knex.Transaction, row: NotificationRecord): Promise<string[]> {
  if (!row.ticket_id) return row.references;
  const first = await trx('mail_message_ids').where({ tenant_id: row.tenant_id, ticket_id: row.ticket_id, direction: 'in' })
    .orderBy('created_at').orderBy('id').first('message_id') as { message_id: string } | undefined;
  return first && !row.references.includes(first.message_id) ? [first.message_id, ...row.references] : row.references;
}

async function sendOne(target: SmtpTarget, row: NotificationRecord, references: string[]): Promise<void> {
  await target.transport.sendMail({
    from: target.from,
    to: row.to_address,
    subject: row.subject,
    text: row.body_text,
    html: row.body_html,
    messageId: row.message_id,
    inReplyTo: references[0],
    references,
    headers: { 'Auto-Submitted': 'auto-generated', 'X-Auto-Response-Suppress': 'All' },
    // A meeting invitation: the calendar part as text/calendar; method=… (and an .ics attachment).
    ...(row.ical_method && row.ical_content ? { icalEvent: { method: row.ical_method, filename: 'invite.ics', content: row.ical_content } } : {}),
  });
}

export async function sendDueNotifications(deps: Deps, now: Date, filter: SendFilter = {}): Promise<{ sent: number; retrying: number; failed: number }> {
  const totals = { sent: 0, retrying: 0, failed: 0 };
  for (;;) {
    const claimed = await deps.db.transaction(async (trx) => {
      const qb = trx<NotificationRecord>('notifications')
        .where('status', 'pending').where('next_attempt_at', '<=', now)
        .orderBy('next_attempt_at').limit(BATCH).forUpdate().skipLocked()
        .comment('cross-tenant: the mail-send job walks every tenant\'s outbox');
      if (filter.tenantId) qb.where('tenant_id', filter.tenantId);
      if (filter.ids) qb.whereIn('id', filter.ids);
      const rows = await qb;
      const targets = new Map<string, SmtpTarget | Error | null>();
      for (const row of rows) {
        if (!targets.has(row.tenant_id)) {
          try {
            targets.set(row.tenant_id, await smtpTargetFor(deps, row.tenant_id, await loadMailSettings({ trx, tenantId: row.tenant_id })));
          } catch (error) {
            targets.set(row.tenant_id, error as Error);
          }
        }
        const target = targets.get(row.tenant_id);
        let error: string | null = null;
        if (!target) error = 'No SMTP server is configured for this tenant or the instance (SMTP_URL)';
        else if (target instanceof Error) error = target.message;
        else {
          try {
            await sendOne(target, row, await threadOf(trx, row));
          } catch (failure) {
            error = failure instanceof Error ? failure.message : String(failure);
          }
        }
        const attempts = row.attempts + 1;
        const update = error === null
          ? { status: 'sent', attempts, sent_at: now, next_attempt_at: null, last_error: null }
          : attempts > RETRY_MINUTES.length
            ? { status: 'failed', attempts, next_attempt_at: null, last_error: error.slice(0, 1000) }
            : { attempts, next_attempt_at: new Date(now.getTime() + RETRY_MINUTES[attempts - 1]! * 60_000), last_error: error.slice(0, 1000) };
        await trx('notifications').where({ tenant_id: row.tenant_id, id: row.id }).update(update);
        if (error === null) totals.sent += 1;
        else if (update.status === 'failed') totals.failed += 1;
        else totals.retrying += 1;
        if (error !== null) deps.log.warn({ tenant_id: row.tenant_id, notification_id: row.id, attempts, err: error }, 'notification mail not sent');
      }
      return rows.length;
    });
    if (claimed < BATCH || filter.ids) return totals;
  }
}
