import { createHash } from 'node:crypto';
import type { AddressObject, ParsedMail } from 'mailparser';
import { htmlToText } from './render.js';
import { REPLY_MARKER, normaliseMessageId } from './threading.js';

/**
 * An inbound RFC 822 message as the channel needs it: sender, Cc, ids, loop-guard signals, the
 * text and HTML with our quoted history removed, files, calendar replies. mailparser decodes
 * transfer encodings and charsets (ISO-8859-1, Shift_JIS, …) to UTF-8 and is lenient with
 * malformed MIME; what it cannot read at all is reported as `null`.
 */
export interface InboundMail {
  from: { address: string; name: string } | null;
  cc: { address: string; name: string }[];
  messageId: string;
  references: string[];
  subject: string;
  text: string;
  html: string | null;
  autoReply: boolean;
  calendarReply: string | null;
  files: { filename: string; contentType: string; content: Buffer; inline: boolean }[];
}

/** Files beyond the attachment limit (HELPDESK_ATTACHMENT_MAX_BYTES' default) are noted, not kept. */
export const FILE_MAX_BYTES = 25 * 1024 * 1024;
const SUBJECT_MAX = 500;
const TEXT_MAX = 100_000;
const HTML_MAX = 400_000;

function addresses(value: AddressObject | AddressObject[] | undefined): { address: string; name: string }[] {
  const list = Array.isArray(value) ? value : value ? [value] : [];
  return list.flatMap((o) => o.value)
    .flatMap((a) => (a.group ? a.group : [a]))
    .filter((a) => typeof a.address === 'string' && /^[^\s@]+@[^\s@]+$/.test(a.address))
    .map((a) => ({ address: a.address!.toLowerCase(), name: (a.name ?? '').trim() }));
}

function header(mail: ParsedMail, name: string): string {
  const value = mail.headers.get(name);
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && 'value' in value) return String((value as { value: unknown }).value);
  return String(value);
}

/** Auto-Submitted other than "no", Precedence bulk/junk/list/auto_reply, X-Autoreply (CONTRACT §14). */
function isAutoReply(mail: ParsedMail): boolean {
  const submitted = header(mail, 'auto-submitted').trim().toLowerCase();
  if (submitted && submitted !== 'no') return true;
  if (/^(bulk|junk|list|auto_reply)$/.test(header(mail, 'precedence').trim().toLowerCase())) return true;
  return mail.headers.has('x-autoreply') || mail.headers.has('x-autorespond');
}

/** The text above our reply marker, without the "On … wrote:" line a client puts before the quote. */
export function stripQuotedText(text: string): string {
  const at = text.indexOf(REPLY_MARKER);
  if (at < 0) return text.trim();
  const lines = text.slice(0, at).split(/\r?\n/);
  lines.pop(); // the marker's own line, as far as it was quoted ("> ##- Reply…")
  while (lines.length && /^\s*(>.*)?$/.test(lines[lines.length - 1]!)) lines.pop();
  if (lines.length && /(wrote|schrieb|écrit)\b.*:\s*$/i.test(lines[lines.length - 1]!)) lines.pop();
  return lines.join('\n').trim();
}

/** The HTML before our marker (the sanitiser closes what the cut leaves open). */
export function stripQuotedHtml(html: string): string {
  const at = html.indexOf(REPLY_MARKER);
  return at < 0 ? html : html.slice(0, at);
}

export async function parseInbound(raw: Buffer): Promise<InboundMail | null> {
  let mail: ParsedMail;
  try {
    // Loaded on first use, like the other parsers a daemon may never need (docs/performance.md).
    const { simpleParser } = await import('mailparser');
    mail = await simpleParser(raw, { skipTextToHtml: true, skipImageLinks: true, keepCidLinks: true });
  } catch {
    return null;
  }
  const from = addresses(mail.from)[0] ?? null;
  const rawIds = [mail.inReplyTo ?? '', ...(Array.isArray(mail.references) ? mail.references : mail.references ? mail.references.split(/\s+/) : [])];
  const references = [...new Set(rawIds.flatMap((r) => r.match(/<[^<>\s]+>/g) ?? []).map(normaliseMessageId))].slice(0, 50);
  const html = typeof mail.html === 'string' && mail.html.trim() ? stripQuotedHtml(mail.html).slice(0, HTML_MAX) : null;
  let text = stripQuotedText(mail.text ?? '');
  if (!text && html) text = htmlToText(html);
  let calendarReply: string | null = null;
  const files: InboundMail['files'] = [];
  const omitted: string[] = [];
  for (const a of mail.attachments) {
    if (a.contentType === 'text/calendar' || a.contentType === 'application/ics') {
      const ics = a.content.toString('utf8');
      if (/^METHOD:REPLY\s*$/im.test(ics)) {
        calendarReply = ics;
        continue;
      }
    }
    const filename = (a.filename || (a.contentType.startsWith('image/') ? 'image' : 'attachment')).replace(/[\u0000-\u001f\u007f/\\]/g, '_').slice(0, 255);
    if (a.content.length > FILE_MAX_BYTES) {
      omitted.push(`[Attachment ${filename} (${a.content.length} bytes) was not kept: it is over the limit of ${FILE_MAX_BYTES} bytes]`);
      continue;
    }
    files.push({
      filename,
      contentType: a.contentType || 'application/octet-stream',
      content: a.content,
      inline: a.contentDisposition === 'inline' || a.related === true,
    });
  }
  return {
    from,
    cc: addresses(mail.cc),
    messageId: mail.messageId
      ? normaliseMessageId(mail.messageId)
      // Without a Message-ID, identical bytes are the same message (re-delivery stays idempotent).
      : `<sha256.${createHash('sha256').update(raw).digest('hex')}@inbound.invalid>`,
    references,
    subject: (mail.subject ?? '').replace(/\s+/g, ' ').trim().slice(0, SUBJECT_MAX) || '(no subject)',
    text: [text.slice(0, TEXT_MAX) || '(no text)', ...omitted].join('\n\n'),
    html,
    autoReply: isAutoReply(mail),
    calendarReply,
    files,
  };
}
