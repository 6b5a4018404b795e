import { STOPWORDS, ownText, words } from './tokens.js';

/**
 * Extractive subject suggestion: the one sentence of the customer's first message that best says
 * what the ticket is about, shortened to a subject line. No model, no outside service:
 * - sentences are the message's own text (quotes and signature removed) split at . ! ? and lines;
 * - a sentence scores the frequency in the whole message of its content words (words that repeat
 *   are the topic), plus a bonus for problem words (error, refund, cannot…), divided by the square
 *   root of its length (long sentences do not win by size), weighted towards the start (people
 *   state the problem first); greetings and thanks score nothing;
 * - the winner loses its leading filler ("I was wondering if", "Hi team,"), is cut at a word
 *   boundary to at most 80 characters and starts with a capital.
 * Limits: it can only reuse the customer's words; a message that is all greeting answers null.
 */
export const MAX_SUBJECT = 80;

const PROBLEM_WORDS = new Set(['error', 'errors', 'fail', 'fails', 'failed', 'failing', 'failure', 'broken', 'crash', 'crashes', 'crashed',
  'cannot', "can't", 'unable', 'refund', 'charged', 'invoice', 'billing', 'payment', 'login', 'password', 'missing', 'wrong', 'down',
  'outage', 'bug', 'issue', 'problem', 'stuck', 'slow', 'timeout', 'cancel', 'delivery', 'order', 'locked', "doesn't", "won't", 'not']);
const PLEASANTRY = /^(hi|hello|hey|dear|good (morning|afternoon|evening)|thanks?|thank you|many thanks|regards|best|cheers|kind regards|sent from)\b/i;
const FILLER = /^(hi|hello|hey)( there| team| all)?[,!.]?\s+|^(so|well|ok|okay),?\s+|^i('m| am) (writing|contacting you|reaching out) (to|because|about)\s+|^i (was wondering|wanted to (ask|know|let you know)|would like to know)( if| whether| why| how)?\s+|^(just )?(a )?quick question:?\s*|^please (help|note)[:,]?\s*/i;

function sentencesOf(text: string): string[] {
  return text.split(/(?<=[.!?])\s+|\n+/).map((s) => s.trim()).filter((s) => words(s).length >= 2);
}

function shorten(sentence: string): string {
  let s = sentence;
  for (let i = 0; i < 3 && FILLER.test(s); i++) s = s.replace(FILLER, '');
  s = s.replace(/[\s.!?,;:]+$/, '').replace(/\s+/g, ' ').trim();
  if (s.length > MAX_SUBJECT) {
    const cut = s.slice(0, MAX_SUBJECT + 1);
    const space = cut.lastIndexOf(' ');
    s = (space > 20 ? cut.slice(0, space) : cut.slice(0, MAX_SUBJECT)).replace(/[\s,;:-]+$/, '');
  }
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export interface SubjectSuggestion { subject: string | null; sentence: string | null; keywords: string[] }

export function suggestSubject(body: string): SubjectSuggestion {
  const text = ownText(body);
  const frequency = new Map<string, number>();
  for (const w of words(text)) if (!STOPWORDS.has(w) && w.length > 2) frequency.set(w, (frequency.get(w) ?? 0) + 1);
  let best: { sentence: string; score: number } | null = null;
  for (const [i, sentence] of sentencesOf(text).entries()) {
    if (PLEASANTRY.test(sentence) && words(sentence).length <= 6) continue;
    const tokens = words(sentence);
    let score = 0;
    for (const w of tokens) {
      if (PROBLEM_WORDS.has(w)) score += 2;
      else if (!STOPWORDS.has(w) && w.length > 2) score += frequency.get(w) ?? 0;
    }
    score = (score / Math.sqrt(tokens.length)) / (1 + 0.15 * i);
    if (score > 0 && (!best || score > best.score)) best = { sentence, score };
  }
  const keywords = [...frequency.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 5).map(([w]) => w);
  if (!best) return { subject: null, sentence: null, keywords };
  return { subject: shorten(best.sentence) || null, sentence: best.sentence, keywords };
}
