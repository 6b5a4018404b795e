import { ownText, words } from './tokens.js';

/**
 * Sentiment and urgency from a small, hand-made lexicon: no model, no outside service, the same
 * text always gives the same answer, and the answer names the words that drove it.
 *
 * Sentiment: each lexicon word has a weight (-3…+3). A negator among the three words before it
 * ("not", "never", "n't"…) flips and dampens it (×-0.75); an intensifier right before it ("very",
 * "extremely") multiplies it by 1.5; "but" halves what came before it (the clause after it is what
 * the writer means). The sum s is squashed to a score in (-1, 1) as s / √(s² + 15) (the
 * normalisation of the VADER method); ≥ 0.25 is positive, ≤ -0.25 negative, else neutral.
 *
 * Urgency: urgency words and phrases have weights (ASAP 3, outage 3, urgent 3, today 1…), plus 1
 * per "!!" run and per shouted word (3+ capital letters, at most 3 counted); u = 1 - e^(-sum/4),
 * in [0, 1); ≥ 0.6 is high, ≥ 0.3 medium, else low.
 *
 * Limits (docs/api.md): English only; no sarcasm, no context beyond three words; words outside the
 * lexicon count for nothing. Accuracy on the committed labelled sample is in docs/api.md.
 */
const POSITIVE: Record<string, number> = {
  thanks: 1.5, thank: 1.5, great: 2, excellent: 3, awesome: 3, amazing: 3, perfect: 3, love: 2.5, loved: 2.5, happy: 2,
  glad: 2, good: 1.5, nice: 1.5, helpful: 2, appreciate: 2, appreciated: 2, fantastic: 3, wonderful: 3, quick: 1, quickly: 1,
  fast: 1, resolved: 1.5, fixed: 1.5, works: 1, working: 0.5, solved: 1.5, pleased: 2, satisfied: 2, smooth: 1.5, easy: 1.5,
  brilliant: 3, best: 2, kind: 1.5, friendly: 1.5, recommend: 2, impressed: 2.5, superb: 3, grateful: 2.5, lifesaver: 3, enjoy: 2,
  fine: 0.5, well: 0.5, clear: 1, useful: 1.5, delighted: 3, beautiful: 2, exactly: 1,
};
const NEGATIVE: Record<string, number> = {
  angry: -3, furious: -3.5, terrible: -3, awful: -3, horrible: -3, worst: -3, bad: -2, poor: -2, disappointed: -2.5,
  disappointing: -2.5, frustrated: -2.5, frustrating: -2.5, annoyed: -2, annoying: -2, unacceptable: -3, ridiculous: -2.5,
  useless: -2.5, broken: -2, fail: -1.5, fails: -1.5, failed: -1.5, failing: -1.5, failure: -1.5, error: -1, errors: -1,
  crash: -2, crashes: -2, crashed: -2, bug: -1, problem: -1, problems: -1, issue: -0.5, wrong: -1.5, slow: -1.5, stuck: -1.5,
  lost: -1.5, missing: -1, refund: -1, complaint: -2, complain: -2, hate: -3, hated: -3, waste: -2, wasted: -2, unhappy: -2.5,
  upset: -2.5, worried: -1.5, confused: -1, confusing: -1.5, scam: -3.5, cancel: -1, cancelled: -1, overcharged: -2.5, charged: -0.5,
  never: -0.5, again: -0.3, still: -0.5, unable: -1.5, cannot: -1, "can't": -1, impossible: -2, nightmare: -3, disaster: -3,
  incompetent: -3, rude: -2.5, ignored: -2.5, ignoring: -2.5, worse: -2.5, sucks: -3, outage: -2, down: -1, leave: -1, lawyer: -2.5,
};
const NEGATORS = new Set(['not', 'no', 'never', 'without', 'hardly', "isn't", "wasn't", "doesn't", "didn't", "don't", "won't", "aren't", "can't", 'cannot', 'nothing', 'nobody']);
const INTENSIFIERS = new Set(['very', 'really', 'extremely', 'so', 'totally', 'completely', 'absolutely', 'incredibly', 'super', 'truly', 'utterly']);

const URGENT_WORDS: Record<string, number> = {
  urgent: 3, urgently: 3, asap: 3, immediately: 2.5, emergency: 3, critical: 2.5, outage: 3, down: 1.5, now: 1, today: 1,
  deadline: 2, blocked: 2, blocking: 2, production: 1.5, prod: 1.5, quickly: 1, soon: 0.5, tonight: 1.5, hours: 0.5,
  losing: 1.5, escalate: 2, escalating: 2, stopped: 1.5, cannot: 1, "can't": 1, unable: 1, security: 1.5, breach: 2.5, hacked: 3,
};
const URGENT_PHRASES: Array<[RegExp, string, number]> = [
  [/\bas soon as possible\b/i, 'as soon as possible', 3], [/\bright (now|away)\b/i, 'right now', 2],
  [/\bnot working\b/i, 'not working', 1.5], [/\bdown for (all|everyone|everybody)\b/i, 'down for everyone', 2],
  [/\blosing (money|customers|sales|data)\b/i, 'losing money', 2],
];

export interface Driver { word: string; weight: number }
export interface SentimentResult {
  sentiment: 'positive' | 'neutral' | 'negative';
  score: number;
  urgency: number;
  urgency_level: 'low' | 'medium' | 'high';
  drivers: { sentiment: Driver[]; urgency: Driver[] };
}

const round = (n: number) => Math.round(n * 1000) / 1000;

export function analyzeSentiment(body: string): SentimentResult {
  const text = ownText(body);
  const tokens = words(text);
  const contributions: Array<{ word: string; weight: number; index: number }> = [];
  let butAt = -1;
  for (const [i, w] of tokens.entries()) {
    if (w === 'but' || w === 'however') butAt = i;
    let weight = POSITIVE[w] ?? NEGATIVE[w];
    if (weight === undefined) continue;
    const before = tokens.slice(Math.max(0, i - 3), i);
    if (before.some((b) => NEGATORS.has(b) || b.endsWith("n't"))) weight *= -0.75;
    if (i > 0 && INTENSIFIERS.has(tokens[i - 1]!)) weight *= 1.5;
    contributions.push({ word: w, weight, index: i });
  }
  let sum = 0;
  for (const c of contributions) {
    if (c.index < butAt) c.weight *= 0.5;
    sum += c.weight;
  }
  const score = sum / Math.sqrt(sum * sum + 15);

  const urgencyDrivers: Driver[] = [];
  for (const w of new Set(tokens)) if (URGENT_WORDS[w]) urgencyDrivers.push({ word: w, weight: URGENT_WORDS[w]! });
  for (const [pattern, label, weight] of URGENT_PHRASES) if (pattern.test(text)) urgencyDrivers.push({ word: label, weight });
  const bangs = (text.match(/!{2,}/g) ?? []).length;
  if (bangs) urgencyDrivers.push({ word: '!!', weight: Math.min(bangs, 3) });
  const shouted = (text.match(/\b[A-Z]{3,}\b/g) ?? []).filter((w) => !['ASAP', 'API', 'URL', 'PDF', 'CSV', 'SSO', 'VPN', 'FAQ', 'USD', 'EUR'].includes(w));
  if (shouted.length) urgencyDrivers.push({ word: 'CAPITALS', weight: Math.min(shouted.length, 3) });
  const urgencySum = urgencyDrivers.reduce((s, d) => s + d.weight, 0);
  const urgency = 1 - Math.exp(-urgencySum / 4);

  const merged = new Map<string, number>();
  for (const c of contributions) merged.set(c.word, (merged.get(c.word) ?? 0) + c.weight);
  return {
    sentiment: score >= 0.25 ? 'positive' : score <= -0.25 ? 'negative' : 'neutral',
    score: round(score),
    urgency: round(urgency),
    urgency_level: urgency >= 0.6 ? 'high' : urgency >= 0.3 ? 'medium' : 'low',
    drivers: {
      sentiment: [...merged.entries()].map(([word, weight]) => ({ word, weight: round(weight) }))
        .sort((a, b) => Math.abs(b.weight) - Math.abs(a.weight) || a.word.localeCompare(b.word)).slice(0, 10),
      urgency: urgencyDrivers.sort((a, b) => b.weight - a.weight || a.word.localeCompare(b.word)).slice(0, 10),
    },
  };
}
