import type { Ctx } from '../core/context.js';
import { scoped } from '../db/tenant-scope.js';

/**
 * The `mail_settings` row of a tenant (one per tenant, keyed by tenant_id alone, so it is read
 * through `scoped()` rather than a TenantModel). Passwords stay encrypted here; only the
 * transports decrypt them, at the moment they connect.
 */
export interface MailSettingsRow {
  tenant_id: string;
  smtp_host: string | null;
  smtp_port: number | null;
  smtp_security: 'tls' | 'starttls' | 'none' | null;
  smtp_username: string | null;
  smtp_password_enc: string | null;
  from_address: string | null;
  from_name: string | null;
  imap_host: string | null;
  imap_port: number | null;
  imap_security: 'tls' | 'starttls' | 'none' | null;
  imap_username: string | null;
  imap_password_enc: string | null;
  imap_mailbox: string;
  poll_interval_seconds: number;
  delete_after_import: boolean;
  imap_uid_validity: string | null;
  imap_last_uid: string;
  imap_polled_at: Date | null;
  imap_error: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function loadMailSettings(ctx: Pick<Ctx, 'trx' | 'tenantId'>, options: { forUpdate?: boolean } = {}): Promise<MailSettingsRow | null> {
  const qb = scoped<MailSettingsRow>(ctx, 'mail_settings');
  if (options.forUpdate) qb.forUpdate();
  return (await qb.first()) ?? null;
}

export async function saveMailSettings(ctx: Ctx, columns: Partial<MailSettingsRow>): Promise<MailSettingsRow> {
  const [row] = await ctx.trx('mail_settings')
    .insert({ ...columns, tenant_id: ctx.tenantId, created_at: ctx.now, updated_at: ctx.now })
    .onConflict('tenant_id')
    .merge({ ...columns, updated_at: ctx.now })
    .returning('*');
  return row as MailSettingsRow;
}
