import type { Ctx } from '../core/context.js';
import { scoped } from '../db/tenant-scope.js';
import { isStaffActor } from '../tickets/visibility.js';
import { sharedOrganizationIds } from '../tickets/directory-links.js';
import type { TicketOut } from '../tickets/schemas.js';
import type { Message } from '../conversation/schemas.js';
import type { ArchiveReader } from '../tickets/archive-port.js';
import { decodeFile, jsonOf, type FileKind } from './parquet.js';
import { archiveStoreFor } from './store.js';
import type { FileMeta } from './batches.js';

/**
 * Reading an archived ticket (CONTRACT §19): `archived_tickets` says where it lives and who may
 * see it; the Parquet files say what it was. The desk's visibility holds as for hot tickets: staff
 * see every ticket, a customer their own (and their shared organizations'), never private notes.
 */
interface Located { batchId: string; files: FileMeta[] }

async function locate(ctx: Ctx, id: string): Promise<Located | null> {
  const row = await scoped(ctx, 'archived_tickets as a')
    .join('archive_batches as b', function () { this.on('b.tenant_id', 'a.tenant_id').andOn('b.id', 'a.batch_id'); })
    .where('a.ticket_id', id)
    .first('a.requester_id', 'a.organization_id', 'b.id as batch_id', 'b.files') as { requester_id: string; organization_id: string | null; batch_id: string; files: FileMeta[] } | undefined;
  if (!row) return null;
  if (!isStaffActor(ctx)) {
    const me = ctx.actor.userId;
    if (!me) return null;
    const mine = row.requester_id === me
      || (row.organization_id !== null && (await sharedOrganizationIds(ctx, me)).includes(row.organization_id));
    if (!mine) return null;
  }
  return { batchId: row.batch_id, files: row.files };
}

async function rowsOf(ctx: Ctx, located: Located, kind: FileKind, ticketId: string): Promise<Record<string, unknown>[]> {
  const file = located.files.find((f) => f.kind === kind);
  if (!file) return [];
  const bytes = await archiveStoreFor(ctx.deps.config).get(file.key);
  return (await decodeFile(bytes)).filter((r) => (kind === 'tickets' ? r.id : r.ticket_id) === ticketId);
}

async function messagesOf(ctx: Ctx, located: Located, id: string): Promise<Message[]> {
  const staff = isStaffActor(ctx);
  return (await rowsOf(ctx, located, 'messages', id))
    .filter((r) => staff || r.is_private !== true)
    .map((r) => jsonOf<Message>(r.message));
}

export const archiveReader: ArchiveReader = {
  async ticket(ctx, id) {
    const located = await locate(ctx, id);
    if (!located) return null;
    const [row] = await rowsOf(ctx, located, 'tickets', id);
    if (!row) return null;
    return { ...jsonOf<TicketOut>(row.ticket), archived: true, messages: await messagesOf(ctx, located, id) };
  },
  async messages(ctx, id) {
    const located = await locate(ctx, id);
    return located ? messagesOf(ctx, located, id) : null;
  },
};
