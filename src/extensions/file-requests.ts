import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { recordAudit } from '../audit/service.js';
import { emitTicketChange } from '../events/emit/ticket-change.js';
import { loadVisibleTicket } from '../tickets/visibility.js';
import { ExtensionLink } from './models.js';
import { loadProvider, runJson } from './runtime.js';
import { ticketSnapshot } from './staff.js';

/**
 * Storage file requests (SPEC "Extensions"): a storage extension asks its vendor for a tokenized
 * upload address for the ticket's customer. The plugin's `create_file_request` gets the request
 * and the ticket and answers `{ url, token?, expires_at? }`; the service audits it and records a
 * `ticket.extension_action` on the ticket's timeline. The address itself is the vendor's.
 */
const FILE_REQUEST_OP = 'create_file_request';

export interface FileRequestIn { title: string; description?: string; max_file_size_bytes?: number; allowed_extensions?: string[] }
export interface FileRequestOut {
  provider: string; ticket_id: string; title: string; description: string; max_file_size_bytes: number | null; allowed_extensions: string[];
  url: string; token: string | null; expires_at: string | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export async function createFileRequest(ctx: Ctx, ticketId: string, provider: string, input: FileRequestIn): Promise<FileRequestOut> {
  const ticket = await loadVisibleTicket(ctx, ticketId);
  const ext = await loadProvider(ctx, provider);
  if (!ext.manifest.entrypoints.includes(FILE_REQUEST_OP)) throw errors.notFound('extension operation', FILE_REQUEST_OP);
  const extensions = [...new Set((input.allowed_extensions ?? []).map((e) => e.replace(/^\./, '').toLowerCase()))];
  const link = await ExtensionLink.scoped(ctx).where({ ticket_id: ticket.id, extension_id: ext.id }).first();
  const request = {
    title: input.title, description: input.description ?? '', max_file_size_bytes: input.max_file_size_bytes ?? null, allowed_extensions: extensions,
  };
  const raw = await runJson(ctx.deps, ext, FILE_REQUEST_OP, { ...request, ticket: await ticketSnapshot(ctx, ticket), link: link?.external_id ?? null });
  const doc = isObject(raw) ? raw : {};
  const url = typeof doc.url === 'string' ? doc.url.slice(0, 2000) : '';
  if (!/^https?:\/\//i.test(url)) throw errors.extensionFailed(ext.name, `its ${FILE_REQUEST_OP} answered no http(s) url`);
  const out: FileRequestOut = {
    provider: ext.name, ticket_id: ticket.id, ...request, url,
    token: typeof doc.token === 'string' ? doc.token.slice(0, 500) : null,
    expires_at: typeof doc.expires_at === 'string' ? doc.expires_at.slice(0, 64) : null,
  };
  await emitTicketChange(ctx, 'ticket.extension_action', { ticketId: ticket.id, from: `${ext.name}: ${FILE_REQUEST_OP}`, to: `file request "${input.title.slice(0, 200)}"` });
  // The tokenized address is a credential of sorts: the audit keeps what was asked, not the token.
  await recordAudit(ctx, {
    action: 'extension.file_request', resourceType: 'ticket', resourceId: ticket.id,
    changes: { extension: ext.name, title: input.title, max_file_size_bytes: request.max_file_size_bytes, allowed_extensions: extensions },
  });
  return out;
}
