import type { Ctx } from '../core/context.js';
import { toRfc3339 } from '../core/clock.js';
import { errors } from '../core/errors.js';
import { recordAudit } from '../audit/service.js';
import { assertAllowedHost } from './host-guard.js';
import { connectImap } from './imap-client.js';
import { inboundTokenFor } from './inbound-token.js';
import { MASKED_PASSWORD, type MailSettingsIn, type MailSettingsOut, type TestAnswer } from './schemas.js';
import { loadMailSettings, saveMailSettings, type MailSettingsRow } from './settings-store.js';
import { smtpTargetFor } from './transports.js';

/**
 * GET/POST /mail-settings and the two connection tests (CONTRACT §14). Passwords are encrypted
 * with deps.box and read back as "********"; sending "********" keeps the stored one. Hosts follow
 * the outbound-target rules. Every change is audited (without secrets).
 */

export function inboundUrl(ctx: Ctx): string {
  return `${ctx.deps.config.siteUrl}/api/v1/integrations/email/inbound/${inboundTokenFor(ctx.deps.box, ctx.tenantId)}`;
}

function settingsOut(ctx: Ctx, row: MailSettingsRow | null): MailSettingsOut {
  return {
    smtp: row?.smtp_host
      ? {
        host: row.smtp_host,
        port: row.smtp_port!,
        security: row.smtp_security!,
        username: row.smtp_username,
        password: row.smtp_password_enc ? MASKED_PASSWORD : null,
        from_address: row.from_address!,
        from_name: row.from_name,
      }
      : null,
    imap: row?.imap_host
      ? {
        host: row.imap_host,
        port: row.imap_port!,
        security: row.imap_security!,
        username: row.imap_username!,
        password: MASKED_PASSWORD,
        mailbox: row.imap_mailbox,
        poll_interval_seconds: row.poll_interval_seconds,
        delete_after_import: row.delete_after_import,
        last_polled_at: toRfc3339(row.imap_polled_at),
        last_error: row.imap_error,
      }
      : null,
    inbound_url: inboundUrl(ctx),
  };
}

export async function getMailSettings(ctx: Ctx): Promise<MailSettingsOut> {
  return settingsOut(ctx, await loadMailSettings(ctx));
}

/** The stored secret for a submitted password: kept, replaced, or (absent) none. */
function passwordColumn(ctx: Ctx, submitted: string | undefined, stored: string | null, field: string, required: boolean): string | null {
  if (submitted === MASKED_PASSWORD) {
    if (!stored) throw errors.invalid(field, 'has no stored password to keep; send the password');
    return stored;
  }
  if (submitted === undefined) {
    if (required) throw errors.invalid(field, 'is required');
    return null;
  }
  return ctx.deps.box.encrypt(submitted);
}

export async function updateMailSettings(ctx: Ctx, input: MailSettingsIn): Promise<MailSettingsOut> {
  const before = await loadMailSettings(ctx, { forUpdate: true });
  const columns: Partial<MailSettingsRow> = {};
  const changed: Record<string, unknown> = {};
  const allowPrivate = ctx.deps.config.webhooksAllowPrivate;

  if (input.smtp !== undefined) {
    const smtp = input.smtp;
    if (smtp) await assertAllowedHost(smtp.host, allowPrivate, 'smtp.host');
    Object.assign(columns, smtp
      ? {
        smtp_host: smtp.host.toLowerCase(),
        smtp_port: smtp.port,
        smtp_security: smtp.security,
        smtp_username: smtp.username ?? null,
        smtp_password_enc: passwordColumn(ctx, smtp.password, before?.smtp_password_enc ?? null, 'smtp.password', false),
        from_address: smtp.from_address.toLowerCase(),
        from_name: smtp.from_name ?? null,
      }
      : { smtp_host: null, smtp_port: null, smtp_security: null, smtp_username: null, smtp_password_enc: null, from_address: null, from_name: null });
    changed.smtp = smtp ? { host: smtp.host, port: smtp.port, security: smtp.security, from_address: smtp.from_address, password_changed: smtp.password !== MASKED_PASSWORD && smtp.password !== undefined } : null;
  }
  if (input.imap !== undefined) {
    const imap = input.imap;
    if (imap) await assertAllowedHost(imap.host, allowPrivate, 'imap.host');
    const sameMailbox = imap && before?.imap_host === imap.host.toLowerCase() && before.imap_username === imap.username
      && before.imap_mailbox === (imap.mailbox ?? 'INBOX');
    Object.assign(columns, imap
      ? {
        imap_host: imap.host.toLowerCase(),
        imap_port: imap.port,
        imap_security: imap.security,
        imap_username: imap.username,
        imap_password_enc: passwordColumn(ctx, imap.password, before?.imap_password_enc ?? null, 'imap.password', true),
        imap_mailbox: imap.mailbox ?? 'INBOX',
        poll_interval_seconds: imap.poll_interval_seconds ?? 60,
        delete_after_import: imap.delete_after_import ?? false,
        imap_error: null,
      }
      : { imap_host: null, imap_port: null, imap_security: null, imap_username: null, imap_password_enc: null, imap_error: null });
    // Another mailbox starts from its beginning; the same one keeps its resume point.
    if (!sameMailbox) Object.assign(columns, { imap_uid_validity: null, imap_last_uid: '0', imap_polled_at: null });
    changed.imap = imap ? { host: imap.host, port: imap.port, security: imap.security, username: imap.username, mailbox: imap.mailbox ?? 'INBOX', password_changed: imap.password !== MASKED_PASSWORD } : null;
  }
  const row = Object.keys(columns).length ? await saveMailSettings(ctx, columns) : before;
  if (Object.keys(changed).length) {
    await recordAudit(ctx, { action: 'mail_settings.updated', resourceType: 'mail_settings', resourceId: ctx.tenantId, changes: changed });
  }
  return settingsOut(ctx, row);
}

const failure = (error: unknown): TestAnswer => ({ ok: false, error: error instanceof Error ? error.message.slice(0, 500) : String(error) });

/** Connects and logs in to the SMTP server mail would go through; with `to`, sends a test message. */
export async function testSmtp(ctx: Ctx, input: { to?: string }): Promise<TestAnswer> {
  const settings = await loadMailSettings(ctx);
  try {
    const target = await smtpTargetFor(ctx.deps, ctx.tenantId, settings);
    if (!target) return { ok: false, error: 'No SMTP server is configured for this tenant or the instance (SMTP_URL)' };
    await target.transport.verify();
    if (input.to) {
      await target.transport.sendMail({
        from: target.from,
        to: input.to,
        subject: 'Helpdesk test message',
        text: 'This message confirms that your helpdesk can send mail through this server.',
        headers: { 'Auto-Submitted': 'auto-generated' },
      });
    }
    return { ok: true };
  } catch (error) {
    return failure(error);
  }
}

/** Connects and logs in to the tenant's IMAP server and opens the mailbox. */
export async function testImap(ctx: Ctx): Promise<TestAnswer> {
  const settings = await loadMailSettings(ctx);
  if (!settings?.imap_host) return { ok: false, error: 'No IMAP server is configured' };
  try {
    const client = await connectImap(ctx.deps, settings);
    try {
      await client.mailboxOpen(settings.imap_mailbox, { readOnly: true });
    } finally {
      await client.logout().catch(() => client.close());
    }
    return { ok: true };
  } catch (error) {
    return failure(error);
  }
}
