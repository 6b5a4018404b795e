import type { FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../src/core/errors.js';
import type { UploadPart } from '../src/conversation/attachments.js';

/**
 * Multipart bodies (uploads): the pipeline lets `multipart/form-data` reach only routes that
 * declare `multipart` (route.ts), and such a route hands `uploadParts(request)` to its service.
 * The parts are read lazily, so the service checks ids and rights before a byte is stored; a
 * body that is not multipart is `415`, a malformed one `400`, a part over the size limit `413`
 * (limits: app.ts, HELPDESK_ATTACHMENT_MAX_BYTES).
 */
export async function* uploadParts(request: FastifyRequest): AsyncIterable<UploadPart> {
  if (!request.isMultipart()) {
    throw new AppError('unsupported_media_type', `Content type ${request.headers['content-type'] ?? '(none)'} is not supported here; send multipart/form-data`);
  }
  const iterator = request.parts()[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Awaited<ReturnType<FastifyRequest['parts']> extends AsyncIterableIterator<infer P> ? P : never>>;
    try {
      next = await iterator.next();
    } catch (error) {
      throw translate(error);
    }
    if (next.done) return;
    const part = next.value;
    if (part.type !== 'file') {
      throw new AppError('validation_failed', `${part.fieldname} is not allowed; send files as parts named file`, [
        { field: part.fieldname || '(part)', message: 'is not allowed; send files as parts named file' },
      ]);
    }
    yield {
      fieldname: part.fieldname,
      filename: part.filename,
      declaredType: part.mimetype,
      stream: part.file,
      truncated: () => part.file.truncated,
    };
  }
}

function translate(error: unknown): unknown {
  if (isAppError(error)) return error;
  const status = (error as { statusCode?: number }).statusCode;
  if (status === 413) return new AppError('payload_too_large', 'The upload is over a limit (file size or number of parts)');
  return new AppError('bad_request', 'The multipart body is malformed');
}

/**
 * A multipart form of named parts (files or fields), read into memory with a byte cap per part:
 * a part not in `names` or one named twice is `422`, a part over `maxBytes` is `413`.
 */
export async function formParts(request: FastifyRequest, names: readonly string[], maxBytes: number): Promise<Map<string, Buffer>> {
  if (!request.isMultipart()) {
    throw new AppError('unsupported_media_type', `Content type ${request.headers['content-type'] ?? '(none)'} is not supported here; send multipart/form-data`);
  }
  const found = new Map<string, Buffer>();
  const iterator = request.parts()[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Awaited<ReturnType<FastifyRequest['parts']> extends AsyncIterableIterator<infer P> ? P : never>>;
    try {
      next = await iterator.next();
    } catch (error) {
      throw translate(error);
    }
    if (next.done) return found;
    const part = next.value;
    const name = part.fieldname || '(part)';
    if (!names.includes(name) || found.has(name)) {
      if (part.type === 'file') part.file.resume();
      throw new AppError('validation_failed', `${name} is not a part of this form`, [
        { field: name, message: found.has(name) ? 'is sent twice' : `is not allowed; send the parts ${names.join(', ')}` },
      ]);
    }
    let bytes: Buffer;
    if (part.type === 'file') {
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of part.file) {
          size += (chunk as Buffer).length;
          if (size > maxBytes) throw new AppError('payload_too_large', `The part ${name} is over ${maxBytes} bytes`);
          chunks.push(chunk as Buffer);
        }
      } catch (error) {
        throw translate(error);
      }
      if (part.file.truncated) throw new AppError('payload_too_large', `The part ${name} is over a limit`);
      bytes = Buffer.concat(chunks);
    } else {
      bytes = Buffer.from(String(part.value ?? ''), 'utf8');
      if (bytes.length > maxBytes) throw new AppError('payload_too_large', `The part ${name} is over ${maxBytes} bytes`);
    }
    found.set(name, bytes);
  }
}
