import type { Ctx } from '../core/context.js';
import { uuidv7 } from '../core/ids.js';
import { insertScoped, scoped } from '../db/tenant-scope.js';
import type { PassageDraft } from './passages.js';
import { textSearchConfig } from './locale.js';

/**
 * The retrieval index, in PostgreSQL only (CONTRACT §15). Passages carry a weighted tsvector
 * (title A, heading path B, text C) under their locale's configuration. A query is turned into its
 * lexemes by the same configuration; each lexeme is weighted by its inverse document frequency
 * (`kb_terms`, kept as passages come and go), and a passage scores
 * Σ idf(t) · ts_rank(weights, tsv, t, length normalisation): BM25-style term weighting with
 * PostgreSQL's field weights and document length normalisation. Lexemes found nowhere are replaced
 * by their nearest indexed lexeme by trigram similarity (pg_trgm), so a typo still finds its word.
 * Candidates are fetched through the GIN index with the rarer query terms only, at most
 * CANDIDATE_BUDGET of them, which bounds the work on large indexes; every term then counts in the
 * score. A question of common words only looks first at the passages holding all of them.
 */
type Scope = Pick<Ctx, 'trx' | 'tenantId'>;

export interface PassageSource {
  article_id?: string;
  document_id?: string;
  title: string;
  locale: string;
  visibility: 'public' | 'internal';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function sourceFilter(source: { article_id?: string; document_id?: string }): { column: string; id: string } {
  const column = source.article_id ? 'article_id' : 'document_id';
  const id = (source.article_id ?? source.document_id)!;
  // Embedded into ts_stat's query text below: only a well-formed id gets there.
  if (!UUID.test(id)) throw new Error(`not a uuid: ${id}`);
  return { column, id };
}

/** Adds (+1) or removes (-1) the source's passages to the document frequencies of their lexemes. */
async function countTerms(ctx: Scope, source: { article_id?: string; document_id?: string }, config: string, sign: 1 | -1): Promise<void> {
  const { column, id } = sourceFilter(source);
  if (!UUID.test(ctx.tenantId)) throw new Error('not a uuid tenant');
  const inner = `SELECT tsv FROM kb_passages WHERE tenant_id = '${ctx.tenantId}' AND ${column} = '${id}'`;
  await ctx.trx.raw(`
    INSERT INTO kb_terms (tenant_id, config, lexeme, df)
    SELECT ?::uuid, ?::regconfig, word, ? * ndoc FROM ts_stat(?)
    UNION ALL SELECT ?::uuid, ?::regconfig, '', ? * count(*)::int FROM kb_passages WHERE tenant_id = ? AND ${column} = ?
    ORDER BY 3
    ON CONFLICT (tenant_id, config, lexeme) DO UPDATE SET df = kb_terms.df + excluded.df`,
  [ctx.tenantId, config, sign, inner, ctx.tenantId, config, sign, ctx.tenantId, id]);
  if (sign < 0) await ctx.trx.raw('DELETE FROM kb_terms WHERE tenant_id = ? AND config = ?::regconfig AND df <= 0', [ctx.tenantId, config]);
}

/** Removes every passage of an article or a document from the index. */
export async function removePassages(ctx: Scope, source: { article_id?: string; document_id?: string }): Promise<number> {
  const { column, id } = sourceFilter(source);
  const configs = await scoped(ctx, 'kb_passages').where(column, id).distinct('config').pluck('config') as string[];
  for (const config of configs) await countTerms(ctx, source, config, -1);
  return scoped(ctx, 'kb_passages').where(column, id).delete();
}

/** Replaces the passages of an article or a document. */
export async function indexPassages(ctx: Scope & { now: Date }, source: PassageSource, drafts: PassageDraft[]): Promise<number> {
  await removePassages(ctx, source);
  if (!drafts.length) return 0;
  const config = textSearchConfig(source.locale);
  const base = ctx.now.getTime();
  for (let i = 0; i < drafts.length; i += 500) {
    await insertScoped(ctx, 'kb_passages', drafts.slice(i, i + 500).map((draft, j) => ({
      id: uuidv7(base), article_id: source.article_id ?? null, document_id: source.document_id ?? null, position: i + j,
      title: source.title, heading: draft.heading, body: draft.text, config, visibility: source.visibility,
    })));
  }
  await countTerms(ctx, source, config, 1);
  return drafts.length;
}

export interface SearchOptions {
  query: string;
  locale?: string;
  limit: number;
  /** Staff see internal articles too. */
  includeInternal: boolean;
  /** Only passages of articles (the help centre's search). */
  articlesOnly?: boolean;
}

export interface Hit {
  id: string;
  article_id: string | null;
  document_id: string | null;
  title: string;
  heading: string;
  body: string;
  source_url: string | null;
  score: number;
  /** Share of the query's weight (Σ idf) that the passage contains, 0..1. */
  coverage: number;
}

export interface QueryTerm { lexeme: string; idf: number; df: number }

/** At most this many passages are fetched as candidates for scoring (rare terms first). */
const CANDIDATE_BUDGET = 3000;
/** A query word found nowhere is read as the indexed lexeme at least this similar (pg_trgm), if any. */
const TYPO_SIMILARITY = 0.5;
const WEIGHTS = '{0.1, 0.25, 0.6, 1.0}';

/** The query's lexemes (by the locale's configuration) with their idf; typos are mapped to indexed lexemes. */
export async function queryTerms(ctx: Scope, query: string, config: string): Promise<{ terms: QueryTerm[]; total: number }> {
  const parsed = await ctx.trx.raw('SELECT plainto_tsquery(?::regconfig, ?)::text AS q', [config, query]);
  const text = String(parsed.rows[0]?.q ?? '');
  const lexemes = [...new Set([...text.matchAll(/'((?:[^']|'')+)'/g)].map((m) => m[1]!.replace(/''/g, "'")))].slice(0, 32);
  if (!lexemes.length) return { terms: [], total: 0 };
  const rows = await scoped(ctx, 'kb_terms').whereRaw('config = ?::regconfig', [config]).whereIn('lexeme', [...lexemes, '']).select('lexeme', 'df') as Array<{ lexeme: string; df: number }>;
  const df = new Map(rows.map((r) => [r.lexeme, Number(r.df)]));
  const total = df.get('') ?? 0;
  if (!total) return { terms: [], total: 0 };
  const terms: QueryTerm[] = [];
  for (const lexeme of lexemes) {
    let found = lexeme;
    let count = df.get(lexeme) ?? 0;
    if (!count && lexeme.length >= 4) {
      const near = await scoped(ctx, 'kb_terms').whereRaw('config = ?::regconfig', [config]).whereRaw('lexeme % ?', [lexeme]).whereRaw('similarity(lexeme, ?) >= ?', [lexeme, TYPO_SIMILARITY])
        .whereNot('lexeme', '').orderByRaw('similarity(lexeme, ?) DESC, df DESC, lexeme', [lexeme]).first('lexeme', 'df');
      if (near) { found = near.lexeme; count = Number(near.df); }
    }
    if (!count || terms.some((t) => t.lexeme === found)) continue;
    terms.push({ lexeme: found, df: count, idf: Math.log(1 + (total - count + 0.5) / (count + 0.5)) });
  }
  return { terms, total };
}

const quote = (lexeme: string) => `'${lexeme.replace(/'/g, "''")}'`;

/** The best passages for a query, best first; ties broken by id so the same index answers the same. */
export async function searchPassages(ctx: Scope, options: SearchOptions): Promise<{ hits: Hit[]; terms: QueryTerm[] }> {
  const config = textSearchConfig(options.locale);
  const { terms } = await queryTerms(ctx, options.query, config);
  if (!terms.length) return { hits: [], terms };
  // Candidates: the rarest terms whose passages fit the budget (at least the rarest one).
  const byRarity = [...terms].sort((a, b) => a.df - b.df || a.lexeme.localeCompare(b.lexeme));
  const candidates: QueryTerm[] = [];
  let budget = 0;
  for (const term of byRarity) {
    if (candidates.length && budget + term.df > CANDIDATE_BUDGET) break;
    candidates.push(term);
    budget += term.df;
  }
  const totalIdf = terms.reduce((sum, t) => sum + t.idf, 0);
  const scoreSql = terms.map(() => `?::float8 * ts_rank('${WEIGHTS}', p.tsv, ?::tsquery, 1)`).join(' + ');
  const coverageSql = terms.map(() => '(CASE WHEN p.tsv @@ ?::tsquery THEN ?::float8 ELSE 0 END)').join(' + ');
  const bindings: Array<string | number> = [];
  for (const t of terms) bindings.push(t.idf, quote(t.lexeme));
  for (const t of terms) bindings.push(quote(t.lexeme), t.idf / totalIdf);
  type Row = Hit & { score: string | number; coverage: string | number };
  /** The scored passages among those matching `match` (at most CANDIDATE_BUDGET of them). */
  const run = async (match: string): Promise<Row[]> => {
    const inner = scoped(ctx, 'kb_passages')
      .whereRaw('config = ?::regconfig', [config])
      .whereRaw('tsv @@ ?::tsquery', [match])
      .select('tenant_id', 'id', 'article_id', 'document_id', 'title', 'heading', 'body', 'tsv')
      .limit(CANDIDATE_BUDGET);
    if (!options.includeInternal) inner.where('visibility', 'public');
    if (options.articlesOnly) inner.whereNotNull('article_id');
    return await ctx.trx.from(inner.as('p'))
      .leftJoin('kb_documents as d', function join() {
        this.on('d.tenant_id', 'p.tenant_id').andOn('d.id', 'p.document_id');
      })
      .select('p.id', 'p.article_id', 'p.document_id', 'p.title', 'p.heading', 'p.body', 'd.source_url')
      .select(ctx.trx.raw(`(${scoreSql}) AS score`, bindings.slice(0, terms.length * 2)))
      .select(ctx.trx.raw(`(${coverageSql}) AS coverage`, bindings.slice(terms.length * 2)))
      .orderBy('score', 'desc').orderBy('p.id')
      .limit(options.limit) as Row[];
  };
  let rows: Row[];
  if (byRarity[0]!.df > CANDIDATE_BUDGET && terms.length > 1) {
    // Every term is common: passages holding all of them first (a small, precise set); only when
    // they are too few, a bounded share of those holding the rarest one.
    rows = await run(terms.map((t) => quote(t.lexeme)).join(' & '));
    if (rows.length < options.limit) {
      const more = await run(candidates.map((t) => quote(t.lexeme)).join(' | '));
      const seen = new Set(rows.map((r) => r.id));
      rows = [...rows, ...more.filter((r) => !seen.has(r.id))]
        .sort((x, y) => Number(y.score) - Number(x.score) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
        .slice(0, options.limit);
    }
  } else {
    rows = await run(candidates.map((t) => quote(t.lexeme)).join(' | '));
  }
  return {
    terms,
    hits: rows.map((r) => ({ ...r, score: Math.round(Number(r.score) * 1e6) / 1e6, coverage: Number(r.coverage) })),
  };
}
