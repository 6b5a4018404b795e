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
