import { Parser } from 'htmlparser2';

/** Elements whose content is not text a reader sees (sanitize-html's `nonTextTags`). */
const HIDDEN = new Set(['script', 'style', 'textarea', 'option']);

/**
 * The text of an HTML fragment in one pass of htmlparser2 (the parser sanitize-html itself uses),
 * entities decoded, the content of hidden elements left out. `afterElement` may add text where an
 * element ends (a line break after a block). Callers shape the lines themselves: the conversation's
 * plain bodies (src/conversation/html.ts) and the mail's text parts (src/mail/render.ts).
 */
export function htmlText(html: string, afterElement?: (name: string) => string): string {
  let text = '';
  let hidden = 0;
  const parser = new Parser({
    onopentag(name) { if (HIDDEN.has(name)) hidden++; },
    onclosetag(name) {
      if (HIDDEN.has(name)) { if (hidden) hidden--; return; }
      if (afterElement && !hidden) text += afterElement(name);
    },
    ontext(chunk) { if (!hidden) text += chunk; },
  }, { decodeEntities: true });
  parser.end(html);
  return text;
}
