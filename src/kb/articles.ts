import { marked } from 'marked';
import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { paginatePage, type Page } from '../core/pagination.js';
import { insertScoped, isUniqueViolation, scoped } from '../db/tenant-scope.js';
import { diff, recordAudit } from '../audit/service.js';
import { sanitizeBodyHtml } from '../tickets/sanitize.js';
import { htmlSections, splitPassages } from './passages.js';
import { indexPassages, removePassages, searchPassages } from './retrieval.js';
import { normaliseLocale } from './locale.js';
import { seesInternal } from './ask.js';
import type { KbArticle, KbArticleCreate, KbArticleListQuery, KbArticlePatch, KbPublicArticle, KbPublicListQuery } from './schemas.js';

/**
 * Articles (CONTRACT §15): Markdown bodies rendered by marked and sanitised by the desk's
 * sanitiser, draft or published, public or internal, `(locale, slug)` unique per tenant. A
 * published article is in the retrieval index (split along its headings); a draft is not. An
 * article is internal in the index when it or its category is internal.
 */
interface ArticleRow {
  id: string; category_id: string; title: string; slug: string; body: string; body_html: string; locale: string;
  status: 'draft' | 'published'; visibility: 'public' | 'internal'; author_id: string | null; published_at: Date | null;
  created_at: Date; updated_at: Date;
}

export function renderMarkdown(body: string): string {
  return sanitizeBodyHtml(marked.parse(body, { async: false, gfm: true }) as string);
}

export function articleOut(row: ArticleRow): KbArticle {
  return {
    id: row.id, category_id: row.category_id, title: row.title, slug: row.slug, body: row.body, body_html: row.body_html,
    locale: row.locale, status: row.status, visibility: row.visibility, author_id: row.author_id ?? null,
    published_at: toRfc3339(row.published_at), created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)!,
  };
}

function publicOut(row: ArticleRow): KbPublicArticle {
  return {
    id: row.id, category_id: row.category_id, title: row.title, slug: row.slug, body: row.body, body_html: row.body_html,
    locale: row.locale, published_at: toRfc3339(row.published_at), updated_at: toRfc3339(row.updated_at)!,
  };
}

async function save<T>(input: { locale?: string; slug?: string }, write: () => PromiseLike<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'kb_articles_locale_slug')) throw errors.alreadyExists('kb_article', 'slug', `${input.locale ?? ''}/${input.slug ?? ''}`);
    throw error;
  }
}

async function categoryVisibility(ctx: Ctx, categoryId: string, field = 'category_id'): Promise<'public' | 'internal'> {
  const category = await scoped(ctx, 'kb_categories').where({ id: categoryId }).first('visibility');
  if (!category) throw errors.invalid(field, 'is not a category of this knowledge base');
  return category.visibility;
}

/** Puts a published article into the index (or takes a draft out of it). */
async function reindex(ctx: Ctx, row: ArticleRow): Promise<void> {
  if (row.status !== 'published') {
    await removePassages(ctx, { article_id: row.id });
    return;
  }
  const categoryVisible = await categoryVisibility(ctx, row.category_id);
  const { sections } = htmlSections(row.body_html, { titleFromH1: false });
  await indexPassages(ctx, {
    article_id: row.id, title: row.title, locale: row.locale,
    visibility: row.visibility === 'internal' || categoryVisible === 'internal' ? 'internal' : 'public',
  }, splitPassages(sections.length ? sections : [{ path: [], text: row.title }]));
}

/** Re-indexes the published articles of a category (its visibility changed). */
export async function reindexCategory(ctx: Ctx, categoryId: string): Promise<void> {
  const rows = await scoped<ArticleRow>(ctx, 'kb_articles').where({ category_id: categoryId, status: 'published' }).orderBy('id');
  for (const row of rows) await reindex(ctx, row);
}

async function loadArticle(ctx: Ctx, id: string): Promise<ArticleRow> {
  const row = await scoped<ArticleRow>(ctx, 'kb_articles').where({ id }).first();
  if (!row) throw errors.notFound('kb_article', id);
  return row;
}

export async function createArticle(ctx: Ctx, input: KbArticleCreate): Promise<KbArticle> {
  await categoryVisibility(ctx, input.category_id);
  const status = input.status ?? 'draft';
  const locale = normaliseLocale(input.locale);
  const [row] = await save({ locale, slug: input.slug }, () => insertScoped<ArticleRow>(ctx, 'kb_articles', {
    id: uuidv7(ctx.now.getTime()), category_id: input.category_id, title: input.title.trim(), slug: input.slug,
    body: input.body, body_html: renderMarkdown(input.body), locale, status, visibility: input.visibility ?? 'public',
    author_id: ctx.actor.userId, published_at: status === 'published' ? ctx.now : null, created_at: ctx.now, updated_at: ctx.now,
  }));
  await reindex(ctx, row!);
  await recordAudit(ctx, { action: 'kb_article.created', resourceType: 'kb_article', resourceId: row!.id, changes: { title: row!.title, status, locale } });
  return articleOut(row!);
}

export async function getArticle(ctx: Ctx, id: string): Promise<KbArticle> {
  return articleOut(await loadArticle(ctx, id));
}

export async function updateArticle(ctx: Ctx, id: string, input: KbArticlePatch): Promise<KbArticle> {
  const before = await loadArticle(ctx, id);
  const columns: Record<string, unknown> = {};
  if (input.category_id !== undefined) {
    await categoryVisibility(ctx, input.category_id);
    columns.category_id = input.category_id;
  }
  if (input.title !== undefined) columns.title = input.title.trim();
  if (input.slug !== undefined) columns.slug = input.slug;
  if (input.body !== undefined) {
    columns.body = input.body;
    columns.body_html = renderMarkdown(input.body);
  }
  if (input.locale !== undefined) columns.locale = normaliseLocale(input.locale);
  if (input.visibility !== undefined) columns.visibility = input.visibility;
  if (input.status !== undefined) {
    columns.status = input.status;
    if (input.status === 'published' && before.status !== 'published') columns.published_at = ctx.now;
  }
  const changes = diff(before as unknown as Record<string, unknown>, { ...before, ...columns }, ['category_id', 'title', 'slug', 'body', 'locale', 'status', 'visibility']);
  if (!Object.keys(changes).length) return articleOut(before);
  if (changes.body) changes.body = { from: '(previous body)', to: '(new body)' };
  const [after] = await save({ locale: (columns.locale as string) ?? before.locale, slug: (columns.slug as string) ?? before.slug }, () =>
    scoped(ctx, 'kb_articles').where({ id }).update({ ...columns, updated_at: ctx.now }).returning('*')) as ArticleRow[];
  await reindex(ctx, after!);
  await recordAudit(ctx, { action: 'kb_article.updated', resourceType: 'kb_article', resourceId: id, changes });
  return articleOut(after!);
}

export async function deleteArticle(ctx: Ctx, id: string): Promise<void> {
  await loadArticle(ctx, id);
  await removePassages(ctx, { article_id: id });
  await scoped(ctx, 'kb_articles').where({ id }).delete();
  await recordAudit(ctx, { action: 'kb_article.deleted', resourceType: 'kb_article', resourceId: id });
}

/** Article ids matching `q` through the retrieval index, best first. */
async function matchingIds(ctx: Ctx, q: string, locale: string | undefined, includeInternal: boolean): Promise<string[]> {
  const { hits } = await searchPassages(ctx, { query: q, locale, limit: 200, includeInternal, articlesOnly: true });
  return [...new Set(hits.map((h) => h.article_id!))];
}

/** Pages a ranked id list (the order of the search), loading the rows of the page only. */
async function rankedPage<T>(ctx: Ctx, ids: string[], query: { page?: number; page_size?: number }, filter: (qb: ReturnType<typeof scoped>) => void, map: (row: ArticleRow) => T): Promise<Page<T>> {
  const qb = scoped(ctx, 'kb_articles').whereIn('id', ids.length ? ids : ['00000000-0000-0000-0000-000000000000']);
  filter(qb);
  const rows = await qb as ArticleRow[];
  const byId = new Map(rows.map((r) => [r.id, r]));
  const ordered = ids.map((id) => byId.get(id)).filter((r): r is ArticleRow => Boolean(r));
  const page = query.page ?? 1;
  const size = query.page_size ?? 20;
  return { data: ordered.slice((page - 1) * size, page * size).map(map), meta: { page, page_size: size, total: ordered.length } };
}

export async function listArticles(ctx: Ctx, query: KbArticleListQuery): Promise<Page<KbArticle>> {
  const filter = (qb: ReturnType<typeof scoped>) => {
    if (query.status) qb.where('status', query.status);
    if (query.category_id) qb.where('category_id', query.category_id);
    if (query.locale) qb.where('locale', normaliseLocale(query.locale));
  };
  if (query.q?.trim()) {
    return rankedPage(ctx, await matchingIds(ctx, query.q, query.locale, seesInternal(ctx)), query, filter, articleOut);
  }
  const qb = scoped(ctx, 'kb_articles').orderBy('updated_at', 'desc').orderBy('id', 'desc');
  filter(qb);
  return paginatePage<ArticleRow, KbArticle>(query, qb, articleOut);
}

/** Published, public articles in public categories: what the help centre may show. */
function publicFilter(ctx: Ctx, qb: ReturnType<typeof scoped>) {
  qb.where('kb_articles.status', 'published').where('kb_articles.visibility', 'public')
    .whereIn('kb_articles.category_id', scoped(ctx, 'kb_categories').where('visibility', 'public').select('id'));
}

export async function listPublicArticles(ctx: Ctx, query: KbPublicListQuery): Promise<Page<KbPublicArticle>> {
  const filter = (qb: ReturnType<typeof scoped>) => {
    publicFilter(ctx, qb);
    if (query.category_id) qb.where('kb_articles.category_id', query.category_id);
    if (query.locale) qb.where('kb_articles.locale', normaliseLocale(query.locale));
  };
  if (query.q?.trim()) return rankedPage(ctx, await matchingIds(ctx, query.q, query.locale, false), query, filter, publicOut);
  const qb = scoped(ctx, 'kb_articles').orderBy('published_at', 'desc').orderBy('id', 'desc');
  filter(qb);
  return paginatePage<ArticleRow, KbPublicArticle>(query, qb, publicOut);
}

export async function getPublicArticle(ctx: Ctx, locale: string, slug: string): Promise<KbPublicArticle> {
  const qb = scoped(ctx, 'kb_articles').where({ locale: normaliseLocale(locale), slug });
  publicFilter(ctx, qb);
  const row = await qb.first() as ArticleRow | undefined;
  if (!row) throw errors.notFound('kb_article', `${locale}/${slug}`);
  return publicOut(row);
}
