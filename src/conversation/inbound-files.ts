import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Config } from '../core/config.js';
import type { Ctx } from '../core/context.js';
import { uuidv7 } from '../core/ids.js';
import { blobStoreFor } from '../storage/store.js';
import { Attachment } from '../tickets/models.js';
import { sniffContentType } from './sniff.js';

/**
 * Files that arrive with an inbound message (a mail's attachments, a messaging channel's media),
 * kept on the message the same way whatever brought them.
 */
export interface InboundFile {
  filename: string;
  /** The sender's declared type: only a hint for text, the bytes decide (as for uploads). */
  contentType: string;
  content: Buffer;
}

/** Bytes of a file's start that sniffing looks at (as for uploads). */
const HEAD_BYTES = 4100;

/**
 * Stores one inbound file as an attachment of the message. `written` collects the stored keys so
 * the caller can remove them if its transaction rolls back (the row goes with it); `after` keeps
 * the ids, and so the listing, in the sender's order.
 */
export async function storeInboundFile(ctx: Ctx, ticketId: string, messageId: string, file: InboundFile, written: string[], after?: string): Promise<string> {
  let id = uuidv7(ctx.now.getTime());
  while (after && id <= after) id = uuidv7(ctx.now.getTime());
  const key = `${ctx.tenantId}/${id}`;
  written.push(key);
  await blobStoreFor(ctx.deps.config).put(key, Readable.from([file.content]));
  await Attachment.insertIn(ctx, {
    id, ticket_id: ticketId, message_id: messageId, uploaded_by: null,
    filename: file.filename.slice(0, 255), content_type: await sniffContentType(file.content.subarray(0, HEAD_BYTES), file.contentType),
    size: file.content.length, storage_key: key, sha256: createHash('sha256').update(file.content).digest('hex'), created_at: ctx.now,
  });
  return id;
}

/** Removes blobs stored by a transaction that did not commit (`written` holds their keys). */
export async function removeStoredFiles(config: Pick<Config, 'dataDir'>, keys: string[]): Promise<void> {
  const store = blobStoreFor(config);
  await Promise.all(keys.map((key) => store.delete(key).catch(() => undefined)));
}
