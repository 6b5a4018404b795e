import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import type { Deps } from '../core/context.js';
import { assertAllowedHost } from './host-guard.js';
import type { MailSettingsRow } from './settings-store.js';

/**
 * SMTP transports: the tenant's own server (pooled, one pool per tenant and settings version, so
 * an edit starts a fresh pool), else the instance's SMTP_URL. The host is checked against the
 * outbound-target rules right before connecting.
 */
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

export interface SmtpTarget {
  transport: Transporter;
  from: { name: string; address: string } | string;
  /** The address inbound mail from which is ignored (our own). */
  fromAddress: string;
}

const pools = new Map<string, { version: number; transport: Transporter }>();

export function smtpOptions(deps: Deps, settings: MailSettingsRow): SMTPTransport.Options {
  return {
    host: settings.smtp_host!,
    port: settings.smtp_port!,
    secure: settings.smtp_security === 'tls',
    requireTLS: settings.smtp_security === 'starttls',
    ignoreTLS: settings.smtp_security === 'none',
    auth: settings.smtp_username
      ? { user: settings.smtp_username, pass: settings.smtp_password_enc ? deps.box.decrypt(settings.smtp_password_enc) : '' }
      : undefined,
    ...TIMEOUTS,
  };
}

export function addressOf(from: string): string {
  const match = /<([^>]+)>/.exec(from);
  return (match ? match[1]! : from).trim().toLowerCase();
}

/** Whether a tenant's mail has anywhere to go: its own SMTP server, else the instance's SMTP_URL. */
export function hasSmtpTarget(deps: Deps, settings: MailSettingsRow | null): boolean {
  return Boolean(settings?.smtp_host || deps.config.smtpUrl);
}

/** The transport and sender for a tenant, or null when neither it nor the instance has SMTP. */
export async function smtpTargetFor(deps: Deps, tenantId: string, settings: MailSettingsRow | null): Promise<SmtpTarget | null> {
  if (!hasSmtpTarget(deps, settings)) return null;
  if (settings?.smtp_host) {
    await assertAllowedHost(settings.smtp_host, deps.config.webhooksAllowPrivate, 'smtp.host');
    const version = settings.updated_at.getTime();
    let pool = pools.get(tenantId);
    if (!pool || pool.version !== version) {
      pool?.transport.close();
      pool = { version, transport: nodemailer.createTransport({ ...smtpOptions(deps, settings), pool: true, maxConnections: 2 }) };
      pools.set(tenantId, pool);
    }
    return { transport: pool.transport, from: { name: settings.from_name ?? '', address: settings.from_address! }, fromAddress: settings.from_address!.toLowerCase() };
  }
  const key = `instance:${deps.config.smtpUrl}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = { version: 0, transport: nodemailer.createTransport(deps.config.smtpUrl!) };
    pools.set(key, pool);
  }
  return { transport: pool.transport, from: deps.config.mailFrom, fromAddress: addressOf(deps.config.mailFrom) };
}

/** The address a tenant's mail comes from, for the own-address loop guard. */
export function ownAddressOf(deps: Deps, settings: MailSettingsRow | null): string {
  return settings?.from_address?.toLowerCase() ?? addressOf(deps.config.mailFrom);
}

export function closeTransports(): void {
  for (const pool of pools.values()) pool.transport.close();
  pools.clear();
}
