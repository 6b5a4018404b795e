import sanitizeHtml from 'sanitize-html';

/**
 * Message HTML goes through the tickets area's sanitiser (sanitize-html, an allowlist over a real
 * HTML parser, no regular expressions), the same one a ticket's first message passes.
 */
export { sanitizeBodyHtml as sanitizeMessageHtml } from '../tickets/sanitize.js';

/** Elements after which a reader expects a new line. */
const BLOCKS = ['p', 'div', 'li', 'tr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'ul', 'ol', 'table'];

const ENTITIES: Array<[string, string]> = [['&lt;', '<'], ['&gt;', '>'], ['&quot;', '"'], ['&#39;', "'"], ['&#x27;', "'"], ['&nbsp;', ' '], ['&amp;', '&']];

/**
 * The plain text of sanitised HTML (for `body` when only `body_html` is sent, for search and
 * notifications). The input is sanitize-html's own output, so its tags are well-formed: block ends
 * and `<br />` become line breaks, then the sanitiser with no allowed tags keeps only the text, and
 * the few entities it writes are turned back into characters.
 */
export function htmlToText(sanitisedHtml: string): string {
  let marked = sanitisedHtml.split('<br />').join('\n');
  for (const tag of BLOCKS) marked = marked.split(`</${tag}>`).join(`</${tag}>\n`);
  let text = sanitizeHtml(marked, { allowedTags: [], allowedAttributes: {} });
  for (const [entity, char] of ENTITIES) text = text.split(entity).join(char);
  const lines = text.split('\n').map((line) => line.trimEnd());
  const kept: string[] = [];
  for (const line of lines) if (line !== '' || (kept.length && kept[kept.length - 1] !== '')) kept.push(line);
  return kept.join('\n').trim();
}
