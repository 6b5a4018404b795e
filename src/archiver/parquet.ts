import { createRequire } from 'node:module';
import { parquetReadObjects } from 'hyparquet';
import type { ColumnSource } from 'hyparquet-writer';

type Writer = typeof import('hyparquet-writer');
let writer: Promise<Writer> | null = null;

/**
 * hyparquet-writer, loaded on first use. It imports hyparquet's files through a subpath pattern
 * (`hyparquet/src/*.js`) that some older ESM resolvers (the test runner's TypeScript loader among
 * them) refuse, and a refused import stays refused for the process. Node's own loader takes it:
 * through require (require(esm), Node ≥ 20.19), else (older Node) through import.
 */
function loadWriter(): Promise<Writer> {
  writer ??= (async () => {
    try {
      return createRequire(import.meta.url)('hyparquet-writer') as Writer;
    } catch {
      return import('hyparquet-writer');
    }
  })();
  return writer;
}

/**
 * The archive's files: one Parquet file per kind of row and batch. Each row carries a few flat
 * columns (ids, times: what columnar tools filter on) and the row exactly as the API showed it,
 * as JSON text, so an archived ticket reads back as it was.
 */
export const FILE_KINDS = ['tickets', 'messages', 'events', 'attachments'] as const;
export type FileKind = (typeof FILE_KINDS)[number];

export interface TicketArchiveRow { id: string; ticket_number: number; subject: string; requester_id: string; organization_id: string | null; created_at: Date; closed_at: Date | null; json: string }
export interface MessageArchiveRow { id: string; ticket_id: string; is_private: boolean; author_id: string | null; created_at: Date; json: string }
export interface EventArchiveRow { id: string; ticket_id: string; type: string; created_at: Date; json: string }
export interface AttachmentArchiveRow { id: string; ticket_id: string; message_id: string | null; filename: string; content_type: string; size: number; storage_key: string; sha256: string; created_at: Date }

export interface BatchRows {
  tickets: TicketArchiveRow[];
  messages: MessageArchiveRow[];
  events: EventArchiveRow[];
  attachments: AttachmentArchiveRow[];
}

const str = (name: string, data: (string | null)[], nullable = false): ColumnSource => ({ name, data, type: 'STRING', nullable });
const time = (name: string, data: (Date | null)[], nullable = false): ColumnSource => ({ name, data, type: 'TIMESTAMP', nullable });

function columns(kind: FileKind, rows: BatchRows): ColumnSource[] {
  switch (kind) {
    case 'tickets': {
      const r = rows.tickets;
      return [
        str('id', r.map((x) => x.id)), { name: 'ticket_number', data: r.map((x) => BigInt(x.ticket_number)), type: 'INT64', nullable: false },
        str('subject', r.map((x) => x.subject)), str('requester_id', r.map((x) => x.requester_id)),
        str('organization_id', r.map((x) => x.organization_id), true), time('created_at', r.map((x) => x.created_at)),
        time('closed_at', r.map((x) => x.closed_at), true), { name: 'ticket', data: r.map((x) => x.json), type: 'JSON', nullable: false },
      ];
    }
    case 'messages': {
      const r = rows.messages;
      return [
        str('id', r.map((x) => x.id)), str('ticket_id', r.map((x) => x.ticket_id)),
        { name: 'is_private', data: r.map((x) => x.is_private), type: 'BOOLEAN', nullable: false },
        str('author_id', r.map((x) => x.author_id), true), time('created_at', r.map((x) => x.created_at)),
        { name: 'message', data: r.map((x) => x.json), type: 'JSON', nullable: false },
      ];
    }
    case 'events': {
      const r = rows.events;
      return [
        str('id', r.map((x) => x.id)), str('ticket_id', r.map((x) => x.ticket_id)), str('type', r.map((x) => x.type)),
        time('created_at', r.map((x) => x.created_at)), { name: 'event', data: r.map((x) => x.json), type: 'JSON', nullable: false },
      ];
    }
    case 'attachments': {
      const r = rows.attachments;
      return [
        str('id', r.map((x) => x.id)), str('ticket_id', r.map((x) => x.ticket_id)), str('message_id', r.map((x) => x.message_id), true),
        str('filename', r.map((x) => x.filename)), str('content_type', r.map((x) => x.content_type)),
        { name: 'size', data: r.map((x) => BigInt(x.size)), type: 'INT64', nullable: false },
        str('storage_key', r.map((x) => x.storage_key)), str('sha256', r.map((x) => x.sha256)), time('created_at', r.map((x) => x.created_at)),
      ];
    }
  }
}

export async function encodeFile(kind: FileKind, rows: BatchRows): Promise<Uint8Array> {
  const { parquetWriteBuffer } = await loadWriter();
  return new Uint8Array(parquetWriteBuffer({ columnData: columns(kind, rows), createdBy: 'helpdesk ticket archiver' }));
}

/** Every row of a Parquet file as plain objects (JSON columns come back as text or parsed values). */
export async function decodeFile(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return parquetReadObjects({ file: buffer }) as Promise<Record<string, unknown>[]>;
}

/** A JSON column's value as an object, whether the reader parsed it or left it as text. */
export function jsonOf<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}
