import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import type { Ctx } from '../core/context.js';
import { AppError, errors } from '../core/errors.js';
import { uuidv7 } from '../core/ids.js';
import { blobStoreFor } from '../storage/store.js';
import { Attachment, Message } from '../tickets/models.js';
import { Status } from '../vocab/models.js';
import { attachmentSummary } from './attachment-output.js';
import { INLINE_IMAGE_TYPES, sniffContentType } from './sniff.js';
import { attachmentUrl } from './urls.js';
import { runAttachmentsHooks } from './hooks.js';
import { isStaffActor, loadVisibleTicket } from './ticket-port.js';
import type { AttachmentUploadAnswer, InlineImage } from './schemas.js';

/**
 * Files on messages and inline images. Bytes go to the blob store (src/storage/) under a key made
 * from the tenant and the attachment id; the row keeps name, sniffed type, size and SHA-256. An
 * upload is all or nothing: a part over HELPDESK_ATTACHMENT_MAX_BYTES (413), a refused part or a
 * failed insert removes every file this request stored, and the transaction takes the rows back.
 */

/** One uploaded part, as the HTTP adapter hands it over (no HTTP types here). */
export interface UploadPart {
  fieldname: string;
  filename: string;
  /** The client's Content-Type of the part: a hint for text only, never trusted for rendering. */
  declaredType: string | undefined;
  stream: Readable;
  /** True once the stream was cut at the size limit (the parser stops reading there). */
  truncated(): boolean;
}

export const UPLOAD_FIELD = 'file';
/** Bytes of a file's start that sniffing looks at (file-type's reasonable detection size). */
const HEAD_BYTES = 4100;

interface Stored {
  id: string;
  key: string;
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
}

/** A file name safe to store and to offer back: no path, no control characters, bounded. */
function safeFilename(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const clean = [...base].filter((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f && !/\p{Cs}/u.test(c)).join('').trim();
  const bounded = [...clean].slice(0, 255).join('');
  return bounded && bounded !== '.' && bounded !== '..' ? bounded : 'file';
}

function tooLarge(ctx: Ctx): AppError {
  const limit = ctx.deps.config.attachmentMaxBytes;
  return errors.payloadTooLarge(`A file is larger than the limit of ${limit} bytes`, { max_bytes: limit });
}

/** Streams one part into the store while hashing, counting and keeping its head for sniffing. */
async function storePart(ctx: Ctx, part: UploadPart, written: string[]): Promise<Stored> {
  // Ids made in one operation sort in the order they were made (core/ids.ts), so the files of a
  // message list in upload order.
  const id = uuidv7(ctx.now.getTime());
  const key = `${ctx.tenantId}/${id}`;
  const hash = createHash('sha256');
  const limit = ctx.deps.config.attachmentMaxBytes;
  let size = 0;
  let over = false;
  const chunks: Buffer[] = [];
  let headLength = 0;
  // Past the limit the meter drops bytes instead of failing the stream (an error there would race
  // the store's own pipeline); the excess is answered below and the stored rest deleted.
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > limit) over = true;
      if (over) return done();
      hash.update(chunk);
      if (headLength < HEAD_BYTES) {
        chunks.push(chunk.subarray(0, HEAD_BYTES - headLength));
        headLength += Math.min(chunk.length, HEAD_BYTES - headLength);
      }
      done(null, chunk);
    },
  });
  written.push(key);
  await blobStoreFor(ctx.deps.config).put(key, part.stream.pipe(meter));
  if (over || part.truncated()) throw tooLarge(ctx);
  return {
    id,
    key,
    filename: safeFilename(part.filename),
    content_type: await sniffContentType(Buffer.concat(chunks), part.declaredType),
    size,
    sha256: hash.digest('hex'),
  };
}

/**
 * Stores every part, then runs `save` with them; on any failure the stored files are removed
 * before the error goes on (the transaction removes the rows).
 */
async function allOrNothing<T>(ctx: Ctx, parts: AsyncIterable<UploadPart>, save: (stored: Stored[]) => Promise<T>): Promise<T> {
  const written: string[] = [];
  const store = blobStoreFor(ctx.deps.config);
  try {
    const stored: Stored[] = [];
    for await (const part of parts) {
      if (part.fieldname !== UPLOAD_FIELD) {
        part.stream.resume();
        throw errors.invalid(part.fieldname || '(part)', `is not allowed; send files as parts named ${UPLOAD_FIELD}`);
      }
      stored.push(await storePart(ctx, part, written));
    }
    const result = await save(stored);
    // A commit that fails after this point is not seen here; the rows are gone then and the files
    // are orphans under ids nobody knows (a store sweep can match keys against rows).
    return result;
  } catch (error) {
    await Promise.all(written.map((key) => store.delete(key).catch(() => undefined)));
    if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(ctx);
    throw error;
  }
}

function rowOf(ctx: Ctx, file: Stored, links: { ticket_id: string | null; message_id: string | null }) {
  return {
    id: file.id,
    ...links,
    uploaded_by: ctx.actor.userId,
    filename: file.filename,
    content_type: file.content_type,
    size: file.size,
    storage_key: file.key,
    sha256: file.sha256,
    created_at: ctx.now,
  };
}

/**
 * Files for a message: the message must be one the actor sees on a ticket they see; customers add
 * files only to their own messages (`403` otherwise); a closed ticket takes none (`409`).
 */
export async function addMessageAttachments(ctx: Ctx, ticketId: string, messageId: string, parts: AsyncIterable<UploadPart>): Promise<AttachmentUploadAnswer> {
  const ticket = await loadVisibleTicket(ctx, ticketId);
  const message = await Message.scoped(ctx).findOne({ 'messages.id': messageId, 'messages.ticket_id': ticket.id });
  const staff = isStaffActor(ctx);
  if (!message || (!staff && message.is_private)) throw errors.notFound('message', messageId);
  if (!staff && message.author_id !== ctx.actor.userId) throw errors.forbidden('Customers may add files to their own messages only');
  const status = (await Status.findIn(ctx, ticket.status_id))!;
  if (status.category === 'closed') {
    throw errors.conflict(`Ticket ${ticket.ticket_number} is closed; a closed ticket is final`, { reason: 'ticket_closed' });
  }
  return allOrNothing(ctx, parts, async (stored) => {
    if (!stored.length) throw errors.invalid(UPLOAD_FIELD, `is required: send one or more parts named ${UPLOAD_FIELD}`);
    const rows: Attachment[] = [];
    for (const file of stored) rows.push(await Attachment.insertIn(ctx, rowOf(ctx, file, { ticket_id: ticket.id, message_id: message.id })));
    await runAttachmentsHooks(ctx, { ticket, message });
    return { data: rows.map(attachmentSummary) };
  });
}

/**
 * An image for the rich-text editor, before its message exists: exactly one part `file` whose
 * bytes are a raster image (`415` otherwise). It belongs to no ticket until a message's HTML shows
 * it (messages.ts adopts it); until then only its uploader and staff may load it.
 */
export async function addInlineImage(ctx: Ctx, parts: AsyncIterable<UploadPart>): Promise<InlineImage> {
  return allOrNothing(ctx, parts, async (stored) => {
    if (stored.length !== 1) throw errors.invalid(UPLOAD_FIELD, `must be exactly one part named ${UPLOAD_FIELD}`);
    const file = stored[0]!;
    if (!INLINE_IMAGE_TYPES.has(file.content_type)) {
      throw errors.unsupportedMediaType(`An inline image must be PNG, JPEG, GIF, WebP, AVIF or BMP; this file is ${file.content_type}`);
    }
    const row = await Attachment.insertIn(ctx, rowOf(ctx, file, { ticket_id: null, message_id: null }));
    return { id: row.id, url: attachmentUrl(ctx.deps.config.siteUrl, row.id) };
  });
}

export interface AttachmentFile {
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  open(range?: { start: number; end: number }): Promise<Readable>;
}

/**
 * An attachment the actor may download. Staff: any of the tenant. Customers: files of public
 * messages on tickets they may see, and inline images they uploaded themselves. Anything else is
 * simply not found.
 */
export async function openAttachment(ctx: Ctx, id: string): Promise<AttachmentFile> {
  const row = await Attachment.findIn(ctx, id);
  if (!row) throw errors.notFound('attachment', id);
  if (!isStaffActor(ctx)) {
    let visible = false;
    if (row.message_id && row.ticket_id) {
      const message = await Message.findIn(ctx, row.message_id);
      visible = !!message && !message.is_private && await loadVisibleTicket(ctx, row.ticket_id).then(() => true, () => false);
    } else if (!row.message_id && !row.ticket_id) {
      visible = !!ctx.actor.userId && row.uploaded_by === ctx.actor.userId;
    }
    if (!visible) throw errors.notFound('attachment', id);
  }
  const store = blobStoreFor(ctx.deps.config);
  return {
    filename: row.filename,
    content_type: row.content_type,
    size: Number(row.size),
    sha256: row.sha256,
    open: (range) => store.get(row.storage_key, range),
  };
}
