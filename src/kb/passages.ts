import { parseHTML } from './dom.js';

/**
 * From extracted text to passages. Every parser produces `Section`s (a heading path and the text
 * under it); the splitter cuts long sections into passages of about `TARGET` characters along
 * paragraph and then sentence boundaries, each keeping its section's heading path, so a passage is
 * small enough to cite and still names where it came from.
 */
export interface Section {
  /** Headings from the outermost to the innermost (may be empty). */
  path: string[];
  text: string;
}

export interface Extracted {
  title: string | null;
  sections: Section[];
}

export interface PassageDraft {
  heading: string;
  text: string;
}

export const HEADING_SEPARATOR = ' > ';
const TARGET = 900;
const MAX = 1400;

const clean = (text: string) => text.replace(/[ \t\f\v\u00a0]+/g, ' ').replace(/ *\n */g, '\n').replace(/\n{3,}/g, '\n\n').trim();

/** Sentences of a text (a sentence ends at . ! ? followed by a space and an upper-case letter or digit, or at a line end). */
export function sentences(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\n+/)) {
    const parts = line.split(/(?<=[.!?])\s+(?=[\p{Lu}\p{N}"'(\[])/u);
    for (const part of parts) if (part.trim()) out.push(part.trim());
  }
  return out;
}

function chunk(text: string): string[] {
  if (text.length <= MAX) return [text];
  const chunks: string[] = [];
  let current = '';
  const push = () => {
    if (current.trim()) chunks.push(current.trim());
    current = '';
  };
  for (const paragraph of text.split(/\n\n+/)) {
    const pieces = paragraph.length > MAX ? sentences(paragraph) : [paragraph];
    for (const piece of pieces) {
      if (current && current.length + piece.length + 1 > TARGET) push();
      if (piece.length > MAX) {
        for (let i = 0; i < piece.length; i += TARGET) chunks.push(piece.slice(i, i + TARGET));
        continue;
      }
      current = current ? `${current}${paragraph.length > MAX ? ' ' : '\n\n'}${piece}` : piece;
    }
  }
  push();
  return chunks;
}

/** The passages of extracted sections, in order; empty sections are dropped, short neighbours under one heading stay one. */
export function splitPassages(sections: Section[]): PassageDraft[] {
  const out: PassageDraft[] = [];
  for (const section of sections) {
    const text = clean(section.text);
    if (!text) continue;
    const heading = section.path.map((h) => clean(h)).filter(Boolean).join(HEADING_SEPARATOR);
    for (const piece of chunk(text)) out.push({ heading, text: piece });
  }
  return out;
}

const BLOCKS = 'h1,h2,h3,h4,h5,h6,p,li,pre,blockquote,dt,dd,th,td,figcaption,caption';
const HEADING = /^H([1-6])$/;

/**
 * Sections of an HTML fragment or page: headings open a section at their level, the text of block
 * elements fills it (an element inside another block is part of that block's text). The first h1
 * is the title (unless `titleFromH1` is false: articles have their own); text before any heading
 * has an empty path.
 */
export function htmlSections(html: string, options: { titleFromH1?: boolean } = {}): Extracted {
  const titleFromH1 = options.titleFromH1 ?? true;
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  const stack: Array<{ level: number; text: string }> = [];
  const sections: Section[] = [];
  let title: string | null = null;
  let current: Section = { path: [], text: '' };
  const blocks = [...document.querySelectorAll(BLOCKS)] as Element[];
  const chosen = new Set(blocks);
  for (const element of blocks) {
    const match = HEADING.exec(element.tagName);
    if (!match) {
      let parent = element.parentElement;
      let nested = false;
      while (parent) {
        if (chosen.has(parent) && !HEADING.test(parent.tagName)) { nested = true; break; }
        parent = parent.parentElement;
      }
      if (nested) continue;
      const text = (element.textContent ?? '').trim();
      if (text) current.text += `${current.text ? '\n\n' : ''}${element.tagName === 'LI' ? `- ${text}` : text}`;
      continue;
    }
    const level = Number(match[1]);
    const text = clean(element.textContent ?? '');
    if (!text) continue;
    if (titleFromH1 && level === 1 && title === null) {
      title = text;
      if (current.text) sections.push(current);
      current = { path: [], text: '' };
      continue;
    }
    if (current.text) sections.push(current);
    while (stack.length && stack[stack.length - 1]!.level >= level) stack.pop();
    stack.push({ level, text });
    current = { path: stack.map((s) => s.text), text: '' };
  }
  if (current.text) sections.push(current);
  return { title, sections };
}

/** Plain text: paragraphs separated by blank lines, no headings. */
export function textSections(text: string): Extracted {
  return { title: null, sections: [{ path: [], text }] };
}
