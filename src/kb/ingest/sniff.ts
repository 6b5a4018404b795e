import { fileTypeFromBuffer } from 'file-type';
import { errors } from '../../core/errors.js';
import { DOCX, MARKDOWN, PDF, TEXT, XLSX } from './extract.js';

/**
 * The type of an uploaded document, from its bytes (file-type reads the magic numbers): PDF, DOCX,
 * XLSX, or UTF-8 text without control characters (Markdown when named `.md`/`.markdown` or sent
 * as text/markdown, plain text otherwise). Anything else is `415`.
 */
function isText(bytes: Buffer): boolean {
  for (const byte of bytes) if (byte < 0x09 || (byte > 0x0d && byte < 0x20) || byte === 0x7f) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

export async function sniffDocument(bytes: Buffer, filename: string, declared: string | undefined): Promise<string> {
  const detected = await fileTypeFromBuffer(bytes);
  if (detected) {
    if ([PDF, DOCX, XLSX].includes(detected.mime)) return detected.mime;
    throw errors.unsupportedMediaType(`${detected.mime} documents cannot be ingested; send PDF, DOCX, XLSX, Markdown or plain text`);
  }
  // A PDF too damaged for file-type still says what it means to be; its ingestion fails with the reason.
  if (bytes.subarray(0, 5).toString('latin1') === '%PDF-') return PDF;
  if (!bytes.length || !isText(bytes)) {
    throw errors.unsupportedMediaType('This document type cannot be ingested; send PDF, DOCX, XLSX, Markdown or plain text');
  }
  const base = (declared ?? '').split(';')[0]!.trim().toLowerCase();
  return /\.(md|markdown)$/i.test(filename) || base === MARKDOWN ? MARKDOWN : TEXT;
}
