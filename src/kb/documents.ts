import { Readable } from 'node:stream';
import type { Ctx, Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { paginatePage, type Page } from '../core/pagination.js';
import { insertScoped, scoped } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';
import { blobStoreFor } from '../storage/store.js';
import { extract, ExtractError } from './ingest/extract.js';
import { sniffDocument } from './ingest/sniff.js';
import { splitPassages } from './passages.js';
import { indexPassages, removePassages } from './retrieval.js';
import { nudge } from './jobs.js';
import type { KbDocument, KbDocumentListQuery } from './schemas.js';
import type { UploadPart } from '../conversation/attachments.js';

/**
 * Source documents (CONTRACT §15). An upload is sniffed, stored in the blob store and queued; the
 * `kb-ingest` job extracts its text, splits it into passages under their heading path and indexes
 * them, recording `status`, `error` and the passage count. Replacing the file re-queues it;
 * deleting it removes its passages and its bytes.
 */
export const KB_DOCUMENT_MAX_BYTES = 20 * 1024 * 1024;

export interface DocumentRow {
  tenant_id: string; id: string; filename: string; content_type: string; size: string | number; blob_key: string | null;
  title: string | null; locale: string; status: KbDocument['status']; error: string | null; passages: number;
  source_url: string | null; crawl_id: string | null; content_hash: string | null;
  created_at: Date; updated_at: Date; indexed_at: Date | null;
}

export function documentOut(row: DocumentRow): KbDocument {
  return {
    id: row.id, filename: row.filename, content_type: row.content_type, size: Number(row.size), status: row.status,
    error: row.error ?? null, passages: row.passages, source_url: row.source_url ?? null,
    created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)!, indexed_at: toRfc3339(row.indexed_at),
  };
}

export interface UploadedFile { filename: string; bytes: Buffer; declaredType?: string }

/** The one part `file` of an upload, read with the documents' size cap (over it: 413). */
export async function readUpload(parts: AsyncIterable<UploadPart>): Promise<UploadedFile | undefined> {
  let file: UploadedFile | undefined;
  for await (const part of parts) {
    if (part.fieldname !== 'file' || file) {
      part.stream.resume();
      throw errors.invalid(part.fieldname || '(part)', file ? 'send one document per upload' : 'is not allowed; send the document as the part file');
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of part.stream) {
      size += (chunk as Buffer).length;
      if (size > KB_DOCUMENT_MAX_BYTES) {
        part.stream.resume();
        throw errors.payloadTooLarge(`Documents are at most ${KB_DOCUMENT_MAX_BYTES} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    if (part.truncated()) throw errors.payloadTooLarge(`Documents are at most ${KB_DOCUMENT_MAX_BYTES} bytes`);
    file = { filename: part.filename, bytes: Buffer.concat(chunks), declaredType: part.declaredType };
  }
  return file;
}

const blobKey = (tenantId: string, id: string, at: Date) => `kb/${tenantId}/${id}-${at.getTime()}`;

function safeName(name: string): string {
  // eslint-disable-next-line no-control-regex
  const base = name.replace(/^.*[\\/]/, '').replace(/[\u0000-\u001f\u007f"]/g, '').trim();
  return (base || 'document').slice(0, 255);
}

async function checked(file: UploadedFile | undefined): Promise<{ filename: string; contentType: string; bytes: Buffer }> {
  if (!file) throw errors.invalid('file', 'is required: send the document as the multipart part file');
  if (file.bytes.length > KB_DOCUMENT_MAX_BYTES) throw errors.payloadTooLarge(`Documents are at most ${KB_DOCUMENT_MAX_BYTES} bytes`);
  const filename = safeName(file.filename);
  return { filename, contentType: await sniffDocument(file.bytes, filename, file.declaredType), bytes: file.bytes };
}

async function loadDocument(ctx: Ctx, id: string): Promise<DocumentRow> {
  const row = await scoped<DocumentRow>(ctx, 'kb_documents').where({ id }).first();
  if (!row) throw errors.notFound('kb_document', id);
  return row;
}

/** Stores the bytes before the row that names them (keys are fresh ids, never overwritten). */
async function storeBytes(ctx: Ctx, key: string, bytes: Buffer): Promise<void> {
  await blobStoreFor(ctx.deps.config).put(key, Readable.from([bytes]));
}

export async function uploadDocument(ctx: Ctx, parts: AsyncIterable<UploadPart>): Promise<KbDocument> {
  const { filename, contentType, bytes } = await checked(await readUpload(parts));
  const id = uuidv7(ctx.now.getTime());
  const key = blobKey(ctx.tenantId, id, ctx.now);
  await storeBytes(ctx, key, bytes);
  let row: DocumentRow | undefined;
  try {
    [row] = await insertScoped<DocumentRow>(ctx, 'kb_documents', {
      id, filename, content_type: contentType, size: bytes.length, blob_key: key, status: 'queued',
      created_by: ctx.actor.userId, created_at: ctx.now, updated_at: ctx.now,
    });
  } catch (error) {
    await blobStoreFor(ctx.deps.config).delete(key);
    throw error;
  }
  await recordAudit(ctx, { action: 'kb_document.uploaded', resourceType: 'kb_document', resourceId: id, changes: { filename, content_type: contentType, size: bytes.length } });
  nudge(ctx, 'kb-ingest');
  return documentOut(row!);
}

/** A new file for a document: its passages stay until the new file is indexed, then are replaced. */
export async function replaceDocument(ctx: Ctx, id: string, parts: AsyncIterable<UploadPart>): Promise<KbDocument> {
  const before = await loadDocument(ctx, id);
  if (before.source_url) throw errors.conflict('A crawled page is replaced by crawling again');
  const { filename, contentType, bytes } = await checked(await readUpload(parts));
  const key = blobKey(ctx.tenantId, id, ctx.now);
  await storeBytes(ctx, key, bytes);
  let row: DocumentRow | undefined;
  try {
    [row] = await scoped(ctx, 'kb_documents').where({ id }).update({
      filename, content_type: contentType, size: bytes.length, blob_key: key, status: 'queued', error: null, updated_at: ctx.now,
    }).returning('*') as DocumentRow[];
  } catch (error) {
    await blobStoreFor(ctx.deps.config).delete(key);
    throw error;
  }
  const oldKey = before.blob_key;
  if (oldKey && oldKey !== key) ctx.afterCommit(() => blobStoreFor(ctx.deps.config).delete(oldKey));
  await recordAudit(ctx, { action: 'kb_document.replaced', resourceType: 'kb_document', resourceId: id, changes: { filename, content_type: contentType, size: bytes.length } });
  nudge(ctx, 'kb-ingest');
  return documentOut(row!);
}

export async function listDocuments(ctx: Ctx, query: KbDocumentListQuery): Promise<Page<KbDocument>> {
  const qb = scoped(ctx, 'kb_documents').orderBy('created_at', 'desc').orderBy('id', 'desc');
  if (query.status) qb.where('status', query.status);
  return paginatePage<DocumentRow, KbDocument>(query, qb, documentOut);
}

export async function getDocument(ctx: Ctx, id: string): Promise<KbDocument> {
  return documentOut(await loadDocument(ctx, id));
}

export async function deleteDocument(ctx: Ctx, id: string): Promise<void> {
  const row = await loadDocument(ctx, id);
  await removePassages(ctx, { document_id: id });
  await scoped(ctx, 'kb_documents').where({ id }).delete();
  if (row.blob_key) {
    const key = row.blob_key;
    ctx.afterCommit(() => blobStoreFor(ctx.deps.config).delete(key));
  }
  await recordAudit(ctx, { action: 'kb_document.deleted', resourceType: 'kb_document', resourceId: id, changes: { filename: row.filename } });
}

/**
 * The `kb-ingest` job: claims the oldest queued document (FOR UPDATE SKIP LOCKED, across tenants)
 * and ingests it, until none is left. A document left `processing` by a process that died is
 * claimed again (the job runner's lock means no other process is ingesting meanwhile).
 */
export async function ingestJob(deps: Deps, now: Date): Promise<{ indexed: number; failed: number }> {
  const out = { indexed: 0, failed: 0 };
  for (;;) {
    const claimed = await deps.db.transaction(async (trx) => {
      const row = await trx<DocumentRow>('kb_documents').whereIn('status', ['queued', 'processing'])
        .orderBy('created_at').orderBy('id').limit(1).forUpdate().skipLocked()
        .comment("cross-tenant: the kb-ingest job walks every tenant's queued documents").first();
      if (!row) return null;
      await trx('kb_documents').where({ tenant_id: row.tenant_id, id: row.id }).update({ status: 'processing' });
      return row;
    });
    if (!claimed) return out;
    const ok = await ingestOne(deps, claimed, now);
    if (ok) out.indexed += 1;
    else out.failed += 1;
  }
}

async function ingestOne(deps: Deps, row: DocumentRow, now: Date): Promise<boolean> {
  const scope = { trx: deps.db, tenantId: row.tenant_id };
  const fail = (message: string) => scoped(scope, 'kb_documents').where({ id: row.id, blob_key: row.blob_key })
    .update({ status: 'failed', error: message.slice(0, 1000), updated_at: now });
  if (!row.blob_key) {
    await fail('The file of this document is no longer stored');
    return false;
  }
  let bytes: Buffer;
  let extracted;
  try {
    const stream = await blobStoreFor(deps.config).get(row.blob_key);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    bytes = Buffer.concat(chunks);
    extracted = await extract(bytes, row.content_type);
  } catch (error) {
    await fail(error instanceof ExtractError ? error.message : `The file could not be read: ${(error as Error).message}`);
    return false;
  }
  const drafts = splitPassages(extracted.sections);
  if (!drafts.length) {
    await fail('No text could be extracted from this document');
    return false;
  }
  const title = extracted.title ?? row.filename.replace(/\.[a-z0-9]+$/i, '');
  return deps.db.transaction(async (trx) => {
    const ctx = { trx, tenantId: row.tenant_id, now };
    // The file may have been replaced or the document deleted meanwhile: then this run's work is void.
    const current = await scoped<DocumentRow>(ctx, 'kb_documents').where({ id: row.id }).forUpdate().first();
    if (!current || current.blob_key !== row.blob_key) return false;
    const passages = await indexPassages(ctx, { document_id: row.id, title, locale: row.locale, visibility: 'public' }, drafts);
    await scoped(ctx, 'kb_documents').where({ id: row.id }).update({
      status: 'indexed', error: null, passages, title, indexed_at: now, updated_at: now,
    });
    return true;
  });
}
