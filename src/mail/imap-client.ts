import type { ImapFlow } from 'imapflow';
import type { Deps } from '../core/context.js';
import { assertAllowedHost } from './host-guard.js';
import type { MailSettingsRow } from './settings-store.js';

/**
 * An IMAP connection to a tenant's mailbox (imapflow), host checked against the outbound-target
 * rules first. Time-outs are short so that one unreachable server holds the poll up for seconds,
 * not minutes.
 */
export async function connectImap(deps: Deps, settings: MailSettingsRow): Promise<ImapFlow> {
  await assertAllowedHost(settings.imap_host!, deps.config.webhooksAllowPrivate, 'imap.host');
  // Loaded on first use: most daemons never poll a mailbox (docs/performance.md).
  const { ImapFlow } = await import('imapflow');
  const client = new ImapFlow({
    host: settings.imap_host!,
    port: settings.imap_port!,
    secure: settings.imap_security === 'tls',
    doSTARTTLS: settings.imap_security === 'starttls' ? true : settings.imap_security === 'none' ? false : undefined,
    auth: { user: settings.imap_username!, pass: deps.box.decrypt(settings.imap_password_enc!) },
    logger: false,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
    disableAutoIdle: true,
  });
  // A dropped connection emits 'error'; unhandled it would crash the process.
  client.on('error', (error: Error) => deps.log.warn({ err: error, tenant_id: settings.tenant_id }, 'imap connection error'));
  await client.connect();
  return client;
}
