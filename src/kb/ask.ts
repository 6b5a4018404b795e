import type { Ctx } from '../core/context.js';
import { textSearchConfig } from './locale.js';
import { sentences } from './passages.js';
import { searchPassages, type Hit, type QueryTerm } from './retrieval.js';
import type { KbAnswer, KbAsk, KbPassage } from './schemas.js';

/**
 * `ask` (CONTRACT §15): retrieval, then an extractive answer. The answer is made of the sentences
 * of the top passages that carry most of the query's weight (Σ idf of the query lexemes they
 * contain, by the same text search configuration), in the passages' rank order, each followed by
 * its `[n]` citation. Nothing is generated and nothing leaves the machine; the same query over the
 * same index gives the same answer.
 */

/** A passage must contain this share of the query's weight to count as relevant. */
export const RELEVANCE_THRESHOLD = 0.3;
/** At most this many passages contribute sentences, and this many sentences make the answer. */
const ANSWER_PASSAGES = 3;
const ANSWER_SENTENCES = 3;

/** Does the caller see internal articles? Staff (and the CLI operator) do; customers and anonymous callers never. */
export function seesInternal(ctx: Ctx): boolean {
  return ctx.actor.role === 'admin' || ctx.actor.role === 'agent' || ctx.actor.type === 'cli';
}

function passageOut(hit: Hit): KbPassage {
  return {
    source: hit.article_id ? 'article' : 'document',
    id: (hit.article_id ?? hit.document_id)!,
    title: hit.title,
    heading: hit.heading,
    source_url: hit.source_url ?? null,
    text: hit.body,
    score: hit.score,
  };
}

async function scoreSentences(ctx: Ctx, config: string, list: string[], terms: QueryTerm[]): Promise<number[]> {
  if (!list.length) return [];
  const expr = terms.map(() => '(CASE WHEN v @@ ?::tsquery THEN ?::float8 ELSE 0 END)').join(' + ');
  const bindings: Array<string | number> = [];
  for (const t of terms) bindings.push(`'${t.lexeme.replace(/'/g, "''")}'`, t.idf);
  const result = await ctx.trx.raw(
    `SELECT i, (${expr}) AS s FROM (SELECT i, to_tsvector(?::regconfig, x) AS v FROM unnest(?::text[]) WITH ORDINALITY AS u(x, i)) q ORDER BY i`,
    [...bindings, config, list] as never,
  );
  return (result.rows as Array<{ s: string | number }>).map((r) => Number(r.s));
}

export async function ask(ctx: Ctx, input: KbAsk, options: { includeInternal?: boolean } = {}): Promise<KbAnswer> {
  const query = input.query.trim();
  const includeInternal = options.includeInternal ?? seesInternal(ctx);
  const { hits, terms } = await searchPassages(ctx, { query, locale: input.locale, limit: input.top_k ?? 5, includeInternal });
  const relevant = hits.filter((hit) => hit.coverage >= RELEVANCE_THRESHOLD);
  if (!relevant.length) return { query, answer: null, passages: [] };
  const config = textSearchConfig(input.locale);
  const totalIdf = terms.reduce((sum, t) => sum + t.idf, 0);
  // Candidate sentences of the best passages, with the passage they cite.
  const candidates: Array<{ text: string; cite: number; order: number }> = [];
  relevant.slice(0, ANSWER_PASSAGES).forEach((hit, index) => {
    for (const sentence of sentences(hit.body)) {
      const text = sentence.replace(/^[-*]\s+/, '').trim();
      if (text.length >= 12) candidates.push({ text, cite: index + 1, order: candidates.length });
    }
  });
  const scores = await scoreSentences(ctx, config, candidates.map((c) => c.text), terms);
  const chosen = candidates
    .map((c, i) => ({ ...c, score: scores[i]! / totalIdf }))
    .filter((c) => c.score > 0)
    // The best sentences, preferring earlier passages (their rank) on a tie, then text order.
    .sort((a, b) => b.score - a.score || a.cite - b.cite || a.order - b.order)
    .slice(0, ANSWER_SENTENCES)
    .sort((a, b) => a.cite - b.cite || a.order - b.order);
  const answer = chosen.length
    ? chosen.map((c) => `${/[.!?:]$/.test(c.text) ? c.text : `${c.text}.`} [${c.cite}]`).join(' ')
    : null;
  return { query, answer, passages: relevant.map(passageOut) };
}
