import { htmlText } from '../core/html-text.js';

/**
 * The template renderer, small enough to audit: it replaces `{{name}}` for the seven names of
 * CONTRACT §14 with plain string values, and does nothing else. No expressions, no loops, no
 * property walks, no `eval`: a template can reach only the strings it is handed. In `body_html`
 * every value is HTML-escaped; in the subject (a header) line breaks are removed.
 */
export const PLACEHOLDERS = [
  'ticket.number', 'ticket.subject', 'ticket.url', 'customer.name', 'agent.name', 'message.body', 'csat.url',
] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];
export type Values = Record<Placeholder, string>;

const TOKEN = /\{\{\s*([^{}]*?)\s*\}\}/g;
const KNOWN = new Set<string>(PLACEHOLDERS);

/** The placeholders a text uses that are not among the seven (for the 422 of an edit). */
export function unknownPlaceholders(text: string): string[] {
  return [...new Set([...text.matchAll(TOKEN)].map((m) => m[1]!).filter((name) => !KNOWN.has(name)))];
}

/** Whether a text shows `{{name}}` (spaces inside the braces allowed, as when rendering). */
export function usesPlaceholder(text: string, name: Placeholder): boolean {
  return [...text.matchAll(TOKEN)].some((m) => m[1] === name);
}

export function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function fill(text: string, values: Values, encode: (value: string) => string): string {
  // An unknown name renders as nothing: edits refuse them, so only a corrupted row could hold one.
  return text.replace(TOKEN, (_m, name: string) => (KNOWN.has(name) ? encode(values[name as Placeholder]) : ''));
}

export function renderSubject(text: string, values: Values): string {
  return fill(text, values, (v) => v.replace(/[\r\n]+/g, ' ')).replace(/[\r\n]+/g, ' ').trim();
}

/** HTML body: values escaped, and a message body's line breaks kept as <br>. */
export function renderHtml(text: string, values: Values): string {
  return fill(text, values, (v) => escapeHtml(v).replace(/\r?\n/g, '<br>'));
}

/** The text part of a mail from its HTML: block ends become line breaks, tags go, entities decode. */
export function htmlToText(html: string): string {
  const marked = html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|blockquote|li|h[1-6]|tr)>/gi, '\n')
    .replace(/<a\s[^>]*href="([^"]*)"[^>]*>(.*?)<\/a>/gi, (_m, href: string, label: string) => (label === href ? href : `${label} (${href})`));
  return htmlText(marked).replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}
