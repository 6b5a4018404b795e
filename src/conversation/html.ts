import sanitizeHtml from 'sanitize-html';

/**
 * Message HTML through a maintained sanitiser (sanitize-html, an allowlist over a real HTML
 * parser; no regular expressions): formatting, tables, links and images survive; scripts, styles,
 * event handlers, forms and `javascript:` URLs do not. Links open in a new tab without handing
 * over the opener.
 */
const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'span', 'del', 'ins', 'sup', 'sub'],
  allowedAttributes: {
    a: ['href', 'name', 'target', 'rel'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    '*': ['title'],
  },
  allowedSchemes: ['http', 'https', 'mailto', 'tel', 'cid'],
  allowedSchemesByTag: { img: ['https', 'http', 'cid'] },
  allowProtocolRelative: false,
  transformTags: {
    a: sanitizeHtml.simpleTransform('a', { target: '_blank', rel: 'noopener noreferrer nofollow' }),
  },
};

export function sanitizeMessageHtml(html: string): string {
  return sanitizeHtml(html, OPTIONS);
}

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
