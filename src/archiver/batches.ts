import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { toRfc3339 } from '../core/clock.js';
import { scoped } from '../db/tenant-scope.js';
import { ticketOut } from '../tickets/output.js';
import { messageOut } from '../conversation/messages.js';
import { Attachment, Message, Ticket } from '../tickets/models.js';
import { EventRecord } from '../events/models.js';
import { FILE_KINDS, decodeFile, encodeFile, type BatchRows, type FileKind } from './parquet.js';
import type { ObjectStore } from './store.js';

/**
 * One batch of tickets through its states, each step committed before the next begins, so a
 * process killed anywhere resumes from the batch's state (the manifest row):
 *   writing  → the hot rows are encoded as Parquet and put into the store (again, after a crash);
 *   written  → every file is read back: SHA-256, row count and ticket ids must match;
 *   verified → in one transaction: `archived_tickets` rows in, events and ticket rows out (their
 *              messages, attachment rows, tags… go with them), the batch `deleted`, the run credited.
 * A ticket changed after it was written is written again before it goes.
 */
export interface FileMeta { kind: FileKind; key: string; bytes: number; sha256: string; rows: number }

export interface BatchRow {
  tenant_id: string;
  id: string;
  run_id: string;
  state: 'writing' | 'written' | 'verified' | 'deleted';
  ticket_ids: string[];
  versions: Record<string, string>;
  files: FileMeta[];
  bytes: string | number;
}

type Scope = { trx: Knex | Knex.Transaction; tenantId: string };

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Where a batch's file lives in the store. */
export const keyOf = (b: Pick<BatchRow, 'tenant_id' | 'run_id' | 'id'>, kind: FileKind) => `${b.tenant_id}/${b.run_id}/${b.id}/${kind}.parquet`;

/** The hot rows of these tickets, as the archive keeps them. */
async function collect(scope: Scope, ids: string[]): Promise<{ rows: BatchRows; versions: Record<string, string> }> {
  const tickets = await Ticket.scoped(scope).whereIn('tickets.id', ids).orderBy('tickets.ticket_number');
  const messages = await Message.scoped(scope).whereIn('messages.ticket_id', ids).orderBy('messages.created_at').orderBy('messages.id');
  const attachments = await Attachment.scoped(scope).whereIn('attachments.ticket_id', ids).orderBy('attachments.created_at').orderBy('attachments.id');
  const events = await EventRecord.scoped(scope).whereIn('events.ticket_id', ids).orderBy('events.created_at').orderBy('events.id');
  const byMessage = new Map<string, Attachment[]>();
  for (const a of attachments) if (a.message_id) byMessage.set(a.message_id, [...(byMessage.get(a.message_id) ?? []), a]);
  const rows: BatchRows = {
    tickets: tickets.map((t) => ({
      id: t.id, ticket_number: Number(t.ticket_number), subject: t.subject, requester_id: t.requester_id, organization_id: t.organization_id,
      created_at: t.created_at, closed_at: t.closed_at, json: JSON.stringify(ticketOut(t)),
    })),
    messages: messages.map((m) => ({
      id: m.id, ticket_id: m.ticket_id, is_private: m.is_private, author_id: m.author_id, created_at: m.created_at,
      json: JSON.stringify(messageOut(m, byMessage.get(m.id))),
    })),
    events: events.map((e) => ({
      id: e.id, ticket_id: e.ticket_id!, type: e.type, created_at: e.created_at,
      json: JSON.stringify({
        id: e.id, type: e.type, from: e.from_value, to: e.to_value, actor_id: e.actor_id, actor_name: e.actor_name, data: e.data, created_at: toRfc3339(e.created_at),
      }),
    })),
    attachments: attachments.map((a) => ({
      id: a.id, ticket_id: a.ticket_id!, message_id: a.message_id, filename: a.filename, content_type: a.content_type,
      size: Number(a.size), storage_key: a.storage_key, sha256: a.sha256, created_at: a.created_at,
    })),
  };
  const versions = Object.fromEntries(tickets.map((t) => [t.id, toRfc3339(t.updated_at)!]));
  return { rows, versions };
}

async function write(scope: Scope, store: ObjectStore, batch: BatchRow, now: Date): Promise<BatchRow> {
  const { rows, versions } = await collect(scope, batch.ticket_ids);
  // A ticket removed meanwhile (by hand) is simply not in the batch any more.
  const ids = rows.tickets.map((t) => t.id);
  const files: FileMeta[] = [];
  for (const kind of FILE_KINDS) {
    const bytes = await encodeFile(kind, rows);
    const key = keyOf(batch, kind);
    await store.put(key, bytes);
    files.push({ kind, key, bytes: bytes.byteLength, sha256: sha256(bytes), rows: rows[kind].length });
  }
  const bytes = files.reduce((sum, f) => sum + f.bytes, 0);
  const [row] = await scoped(scope, 'archive_batches').where({ id: batch.id })
    .update({ state: 'written', ticket_ids: ids, versions: JSON.stringify(versions), files: JSON.stringify(files), bytes, updated_at: now })
    .returning('*');
  return row as BatchRow;
}

/** Reads every file back; any difference sends the batch back to `writing` and fails the run. */
async function verify(scope: Scope, store: ObjectStore, batch: BatchRow, now: Date): Promise<BatchRow> {
  const problem = await verifyFiles(store, batch);
  if (problem) {
    await scoped(scope, 'archive_batches').where({ id: batch.id }).update({ state: 'writing', updated_at: now });
    throw new Error(`Archive batch ${batch.id} failed verification: ${problem}`);
  }
  const [row] = await scoped(scope, 'archive_batches').where({ id: batch.id }).update({ state: 'verified', updated_at: now }).returning('*');
  return row as BatchRow;
}

export async function verifyFiles(store: ObjectStore, batch: BatchRow): Promise<string | null> {
  if (FILE_KINDS.some((kind) => !batch.files.some((f) => f.kind === kind))) return 'a file is missing from the manifest';
  for (const file of batch.files) {
    let bytes: Uint8Array;
    try {
      bytes = await store.get(file.key);
    } catch (error) {
      return `${file.key} could not be read back (${(error as Error).message})`;
    }
    if (bytes.byteLength !== file.bytes || sha256(bytes) !== file.sha256) return `${file.key} differs from what was written`;
    const rows = await decodeFile(bytes);
    if (rows.length !== file.rows) return `${file.key} holds ${rows.length} rows, not ${file.rows}`;
    if (file.kind === 'tickets') {
      const ids = rows.map((r) => String(r.id)).sort();
      if (JSON.stringify(ids) !== JSON.stringify([...batch.ticket_ids].sort())) return `${file.key} does not hold exactly the batch's tickets`;
    }
  }
  return null;
}

/** The hot rows go, in one transaction with the archive's index and the run's totals. */
async function remove(db: Knex, tenantId: string, batch: BatchRow, now: Date): Promise<BatchRow> {
  return db.transaction(async (trx) => {
    const scope = { trx, tenantId };
    const ids = batch.ticket_ids;
    const hot = await Ticket.scoped(scope).whereIn('tickets.id', ids).forUpdate();
    const changed = hot.filter((t) => batch.versions[t.id] !== toRfc3339(t.updated_at));
    if (changed.length) {
      // Changed since it was written: write it again (the next step of this run does).
      const [row] = await scoped(scope, 'archive_batches').where({ id: batch.id }).update({ state: 'writing', updated_at: now }).returning('*');
      return row as BatchRow;
    }
    if (hot.length) {
      await trx('archived_tickets').insert(hot.map((t) => ({
        tenant_id: tenantId, ticket_id: t.id, ticket_number: t.ticket_number, requester_id: t.requester_id,
        organization_id: t.organization_id, closed_at: t.closed_at, batch_id: batch.id, archived_at: now,
      }))).onConflict(['tenant_id', 'ticket_id']).ignore();
      await scoped(scope, 'events').whereIn('ticket_id', ids).delete();
      await scoped(scope, 'tickets').whereIn('id', hot.map((t) => t.id)).delete();
    }
    const [row] = await scoped(scope, 'archive_batches').where({ id: batch.id }).update({ state: 'deleted', updated_at: now }).returning('*');
    await scoped(scope, 'archive_runs').where({ id: batch.run_id }).update({
      tickets: trx.raw('tickets + ?', [hot.length]),
      bytes: trx.raw('bytes + ?', [Number(batch.bytes)]),
      files: trx.raw('files + ?', [batch.files.length]),
    });
    return row as BatchRow;
  });
}

/** Takes a batch from whatever state it is in to `deleted`. */
export async function advance(db: Knex, store: ObjectStore, batch: BatchRow, clock: () => Date): Promise<void> {
  const scope = { trx: db, tenantId: batch.tenant_id };
  let current = batch;
  for (let step = 0; step < 12 && current.state !== 'deleted'; step++) {
    if (current.state === 'writing') current = await write(scope, store, current, clock());
    else if (current.state === 'written') current = await verify(scope, store, current, clock());
    else current = await remove(db, batch.tenant_id, current, clock());
  }
  if (current.state !== 'deleted') throw new Error(`Archive batch ${batch.id} keeps changing; try again later`);
}
