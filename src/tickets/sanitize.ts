import sanitizeHtml from 'sanitize-html';

/**
 * HTML bodies through a maintained sanitiser (no regular expressions): formatting, links and
 * images survive; scripts, styles, event handlers and `javascript:` URLs do not. Links open in a
 * new tab without handing over the opener.
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

export function sanitizeBodyHtml(html: string): string {
  return sanitizeHtml(html, OPTIONS);
}
