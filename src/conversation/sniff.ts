import { fileTypeFromBuffer } from 'file-type';

/**
 * The content type of an upload, decided from its bytes (file-type reads the magic numbers), never
 * from what the client declared: a PNG named `notes.txt` is `image/png`. Text has no magic number,
 * so for bytes that are valid UTF-8 without control characters a declared text-like type is kept;
 * anything else unknown is `application/octet-stream`.
 */
const TEXT_TYPES = new Set(['text/plain', 'text/csv', 'text/markdown', 'text/calendar', 'text/html', 'text/xml', 'application/json', 'application/xml']);

/** Images a browser may show inline from our origin (raster formats only: SVG can carry script). */
export const INLINE_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp']);

function looksLikeText(head: Buffer): boolean {
  for (const byte of head) if (byte < 0x09 || (byte > 0x0d && byte < 0x20) || byte === 0x7f) return false;
  try {
    // The head may end inside a multi-byte character: streaming mode keeps that tail undecided.
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

export async function sniffContentType(head: Buffer, declared: string | undefined): Promise<string> {
  const detected = await fileTypeFromBuffer(head);
  if (detected) return detected.mime;
  const declaredBase = (declared ?? '').split(';')[0]!.trim().toLowerCase();
  if (TEXT_TYPES.has(declaredBase) && looksLikeText(head)) return declaredBase;
  if (!declaredBase && head.length && looksLikeText(head)) return 'text/plain';
  return 'application/octet-stream';
}
