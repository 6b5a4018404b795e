import type { Readable } from 'node:stream';

/**
 * Where file contents live (attachments, inline images), by an opaque key the database row keeps.
 * Small on purpose so an S3-compatible store can implement it later: put a stream, read it whole
 * or a byte range, ask its size, delete it. Keys are made by the caller from ids, never from
 * client input.
 */
export interface BlobStore {
  /** Stores the stream's bytes under `key` (replacing nothing: keys are fresh ids). Resolves once durable. */
  put(key: string, content: Readable): Promise<void>;
  /** The bytes of `key`, or the inclusive range `[start, end]` of them. */
  get(key: string, range?: { start: number; end: number }): Promise<Readable>;
  /** The size in bytes, or null when there is no such key. */
  stat(key: string): Promise<{ size: number } | null>;
  /** Removes `key`; a missing key is no error (deletes are retried after failures). */
  delete(key: string): Promise<void>;
}
