import type { FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { create as contentDisposition } from 'content-disposition';
import rangeParser from 'range-parser';
import { errors } from '../src/core/errors.js';
import { INLINE_IMAGE_TYPES } from '../src/conversation/sniff.js';

/**
 * Binary answers (file downloads): a route handler returns a `BinaryReply` and the pipeline
 * (route.ts) sends its status, headers and stream instead of serialising JSON. `fileReply` builds
 * one for a stored file with what a browser needs to handle it safely:
 * - `Content-Type` as sniffed at upload (never the client's claim);
 * - `Content-Disposition`: `inline` only for raster images (and, on the stream route, audio and
 *   video), `attachment` for everything else, so an uploaded HTML page or SVG is downloaded, never
 *   rendered from our origin; the filename through `content-disposition` (quoted, RFC 6266/8187);
 * - `X-Content-Type-Options: nosniff` and a sandboxing CSP, so nothing else is guessed or run;
 * - `Accept-Ranges: bytes`; one satisfiable `Range` gives `206` with `Content-Range`, none
 *   satisfiable `416`; a malformed Range or several ranges are ignored (the whole file, `200`),
 *   as RFC 9110 allows.
 */
export class BinaryReply {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly body: Readable,
  ) {}
}

export interface StoredFile {
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  open(range?: { start: number; end: number }): Promise<Readable>;
}

const isMedia = (type: string) => type.startsWith('audio/') || type.startsWith('video/');

export async function fileReply(request: FastifyRequest, file: StoredFile, options: { mediaInline?: boolean } = {}): Promise<BinaryReply> {
  const inline = INLINE_IMAGE_TYPES.has(file.content_type) || (options.mediaInline === true && isMedia(file.content_type));
  const headers: Record<string, string> = {
    'Content-Type': file.content_type,
    'Content-Disposition': contentDisposition(file.filename, { type: inline ? 'inline' : 'attachment' }),
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; img-src 'self'; media-src 'self'; sandbox",
    'Cache-Control': 'private, max-age=300',
    ETag: `"${file.sha256}"`,
    'Accept-Ranges': 'bytes',
  };
  const header = request.headers.range;
  if (header && file.size > 0) {
    const ranges = rangeParser(file.size, header, { combine: true });
    if (ranges === -1) throw errors.rangeNotSatisfiable(file.size);
    if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1) {
      const { start, end } = ranges[0]!;
      headers['Content-Range'] = `bytes ${start}-${end}/${file.size}`;
      headers['Content-Length'] = String(end - start + 1);
      return new BinaryReply(206, headers, await file.open({ start, end }));
    }
  }
  headers['Content-Length'] = String(file.size);
  return new BinaryReply(200, headers, await file.open());
}
