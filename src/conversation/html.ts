import { htmlText } from '../core/html-text.js';

/**
 * Message HTML goes through the tickets area's sanitiser (sanitize-html, an allowlist over a real
 * HTML parser, no regular expressions), the same one a ticket's first message passes.
 */
export { sanitizeBodyHtml as sanitizeMessageHtml } from '../tickets/sanitize.js';

/** Elements after which a reader expects a new line. */
const BLOCKS = new Set(['p', 'div', 'li', 'tr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'ul', 'ol', 'table']);

/**
 * The plain text of sanitised HTML (for `body` when only `body_html` is sent, for search and
 * notifications). The input is sanitize-html's own output, so its tags are well-formed and hold
 * nothing but text to keep: one pass of the parser sanitize-html itself uses (htmlparser2, entities
 * decoded) collects the text, `<br>` and block ends become line breaks, runs of blank lines shrink
 * to one. A second sanitising pass used to do this and cost as much as the first.
 */
export function htmlToText(sanitisedHtml: string): string {
  const text = htmlText(sanitisedHtml, (name) => (name === 'br' || BLOCKS.has(name) ? '\n' : ''));
  const lines = text.split('\n').map((line) => line.trimEnd());
  const kept: string[] = [];
  for (const line of lines) if (line !== '' || (kept.length && kept[kept.length - 1] !== '')) kept.push(line);
  return kept.join('\n').trim();
}
