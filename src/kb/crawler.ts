import { createHash } from 'node:crypto';
import { parseHTML } from './dom.js';
import { Readability } from '@mozilla/readability';
import robotsParserModule from 'robots-parser';
import type { Ctx, Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { systemNow, toRfc3339 } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { insertScoped, scoped } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';
import { urlProblem } from '../webhooks/url-guard.js';
import { guardedFetch } from '../extensions/host.js';
import { htmlSections, splitPassages } from './passages.js';
import { indexPassages } from './retrieval.js';
import { nudge } from './jobs.js';
import type { KbCrawl, KbCrawlStart } from './schemas.js';

/**
 * The crawler (CONTRACT §15): from a start address, pages of the same origin only, breadth first,
 * obeying `robots.txt` (user agent `HelpdeskBot`), the include/exclude path prefixes and
 * `max_pages`, 10 s per page and a time budget per crawl, through the outbound-target rules of
 * §14 (the SSRF guard checks every connection; redirects are followed only within the origin).
 * HTML only; each page is reduced to its main text (Readability over linkedom) and becomes a
 * document with its `source_url`. A page whose main text is unchanged since the last crawl is not
 * re-indexed.
 */
export const USER_AGENT = 'HelpdeskBot';
// robots-parser is CommonJS (module.exports = function); its types declare an ES default export.
const robotsParser = robotsParserModule as unknown as (url: string, text: string) => { isAllowed(url: string, ua?: string): boolean | undefined };
const PAGE_BYTES = 5 * 1024 * 1024;
const MAX_ERRORS = 100;

interface CrawlRow {
  tenant_id: string; id: string; url: string; max_pages: number; include: string[]; exclude: string[];
  status: KbCrawl['status']; pages_fetched: number; pages_indexed: number; errors: Array<{ url: string; message: string }>;
  created_at: Date; started_at: Date | null; finished_at: Date | null;
}

function crawlOut(row: CrawlRow): KbCrawl {
  return {
    id: row.id, url: row.url, status: row.status, max_pages: row.max_pages, pages_fetched: row.pages_fetched,
    pages_indexed: row.pages_indexed, errors: row.errors ?? [], created_at: toRfc3339(row.created_at)!,
    started_at: toRfc3339(row.started_at), finished_at: toRfc3339(row.finished_at),
  };
}

export async function startCrawl(ctx: Ctx, input: KbCrawlStart): Promise<{ id: string; status: 'queued' }> {
  const problem = await urlProblem(input.url, ctx.deps.config.webhooksAllowPrivate, 'url');
  if (problem) throw errors.validation([problem]);
  const start = new URL(input.url);
  start.hash = '';
  const id = uuidv7(ctx.now.getTime());
  await insertScoped(ctx, 'kb_crawls', {
    id, url: start.href, max_pages: input.max_pages ?? 50, include: JSON.stringify(input.include ?? []),
    exclude: JSON.stringify(input.exclude ?? []), status: 'queued', created_by: ctx.actor.userId, created_at: ctx.now,
  });
  await recordAudit(ctx, { action: 'kb_crawl.started', resourceType: 'kb_crawl', resourceId: id, changes: { url: start.href } });
  nudge(ctx, 'kb-crawl');
  return { id, status: 'queued' };
}

export async function getCrawl(ctx: Ctx, id: string): Promise<KbCrawl> {
  const row = await scoped<CrawlRow>(ctx, 'kb_crawls').where({ id }).first();
  if (!row) throw errors.notFound('kb_crawl', id);
  return crawlOut(row);
}

export interface CrawlLimits {
  /** Per page (CONTRACT §15: 10 s). */
  pageTimeoutMs: number;
  /** For the whole crawl. */
  crawlBudgetMs: number;
}

const DEFAULT_LIMITS: CrawlLimits = { pageTimeoutMs: 10_000, crawlBudgetMs: 15 * 60_000 };

/** The `kb-crawl` job: claims queued crawls (and one a dead process left running) and runs them. */
export async function crawlJob(deps: Deps, now: Date, limits: CrawlLimits = DEFAULT_LIMITS): Promise<{ crawls: number }> {
  let crawls = 0;
  for (;;) {
    const row = await deps.db.transaction(async (trx) => {
      const found = await trx<CrawlRow>('kb_crawls').whereIn('status', ['queued', 'running'])
        .orderBy('created_at').orderBy('id').limit(1).forUpdate().skipLocked()
        .comment("cross-tenant: the kb-crawl job walks every tenant's queued crawls").first();
      if (!found) return null;
      await trx('kb_crawls').where({ tenant_id: found.tenant_id, id: found.id })
        .update({ status: 'running', started_at: found.started_at ?? now, pages_fetched: 0, pages_indexed: 0, errors: '[]' });
      return found;
    });
    if (!row) return { crawls };
    crawls += 1;
    await runCrawl(deps, row, now, limits);
  }
}

const normalise = (url: URL) => {
  const copy = new URL(url.href);
  copy.hash = '';
  return copy.href;
};

function allowedPath(path: string, include: string[], exclude: string[]): boolean {
  if (include.length && !include.some((prefix) => path.startsWith(prefix))) return false;
  return !exclude.some((prefix) => path.startsWith(prefix));
}

async function readCapped(response: Response, max: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel();
      throw new Error(`the page is over ${max} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The main text of a page, its title and its links (absolute). */
export function readPage(html: string, url: string): { title: string; sections: ReturnType<typeof htmlSections>['sections']; links: string[] } {
  const { document } = parseHTML(html);
  const links: string[] = [];
  for (const a of [...document.querySelectorAll('a[href]')] as Element[]) {
    try {
      links.push(new URL(a.getAttribute('href') ?? '', url).href);
    } catch {
      // not a URL: skip
    }
  }
  const pageTitle = (document.querySelector('title')?.textContent ?? '').trim();
  let content = '';
  try {
    const article = new Readability(document as unknown as Document, { charThreshold: 100 }).parse();
    content = article?.content ?? '';
  } catch {
    content = '';
  }
  if (!content) content = parseHTML(html).document.querySelector('body')?.innerHTML ?? '';
  const extracted = htmlSections(content);
  return { title: extracted.title ?? (pageTitle || new URL(url).pathname), sections: extracted.sections, links };
}

async function runCrawl(deps: Deps, crawl: CrawlRow, now: Date, limits: CrawlLimits): Promise<void> {
  const scope = { trx: deps.db, tenantId: crawl.tenant_id, now };
  const row = () => scoped(scope, 'kb_crawls').where({ id: crawl.id });
  const start = new URL(crawl.url);
  const origin = start.origin;
  const allowPrivate = deps.config.webhooksAllowPrivate;
  const fetcher = guardedFetch([start.hostname], allowPrivate);
  const deadline = systemNow().getTime() + limits.crawlBudgetMs;
  const progress = { pages_fetched: 0, pages_indexed: 0, errors: [] as Array<{ url: string; message: string }> };
  const fail = (url: string, message: string) => {
    if (progress.errors.length < MAX_ERRORS) progress.errors.push({ url, message });
  };
  const save = (extra: Record<string, unknown> = {}) => row().update({ ...progress, errors: JSON.stringify(progress.errors), ...extra });
  const get = async (url: string) => {
    const signal = AbortSignal.timeout(limits.pageTimeoutMs);
    const response = await fetcher(url, { headers: { 'user-agent': USER_AGENT, accept: 'text/html' }, signal });
    return response;
  };

  let robots: ReturnType<typeof robotsParser>;
  try {
    const response = await get(`${origin}/robots.txt`);
    // No robots.txt (4xx) allows everything; a failing one (5xx) might forbid anything: stop.
    if (response.status >= 500) throw new Error(`robots.txt answered HTTP ${response.status}; the crawl waits until it can be read`);
    robots = robotsParser(`${origin}/robots.txt`, response.ok ? await readCapped(response, 512 * 1024) : '');
  } catch (error) {
    fail(`${origin}/robots.txt`, (error as Error).message);
    await save({ status: 'failed', finished_at: systemNow() });
    return;
  }

  const queue: string[] = [normalise(start)];
  const seen = new Set(queue);
  while (queue.length && progress.pages_fetched < crawl.max_pages) {
    if (systemNow().getTime() > deadline) {
      fail(queue[0]!, 'the crawl ran out of time');
      break;
    }
    const url = queue.shift()!;
    const parsed = new URL(url);
    if (robots.isAllowed(url, USER_AGENT) === false) continue;
    if (!allowedPath(parsed.pathname, crawl.include, crawl.exclude)) continue;
    let html: string;
    try {
      const response = await get(url);
      if (response.status >= 300 && response.status < 400) {
        const location = response.headers.get('location');
        const target = location ? new URL(location, url) : null;
        if (target && target.origin === origin && !seen.has(normalise(target))) {
          seen.add(normalise(target));
          queue.unshift(normalise(target));
        }
        continue;
      }
      progress.pages_fetched += 1;
      if (!response.ok) {
        await response.body?.cancel();
        fail(url, `HTTP ${response.status}`);
        continue;
      }
      const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'text/html' && type !== 'application/xhtml+xml') {
        await response.body?.cancel();
        fail(url, `not HTML (${type || 'no content type'})`);
        continue;
      }
      html = await readCapped(response, PAGE_BYTES);
    } catch (error) {
      fail(url, (error as Error).message);
      await save();
      continue;
    }
    const page = readPage(html, url);
    for (const link of page.links) {
      const target = new URL(link);
      if (target.origin !== origin || !['http:', 'https:'].includes(target.protocol)) continue;
      const key = normalise(target);
      if (!seen.has(key)) {
        seen.add(key);
        queue.push(key);
      }
    }
    if (await indexPage(deps, crawl, url, page, Buffer.byteLength(html), now)) progress.pages_indexed += 1;
    await save();
  }
  await save({ status: 'completed', finished_at: systemNow() });
}

/** Indexes a crawled page as a document; false when its main text is unchanged (nothing to do). */
async function indexPage(deps: Deps, crawl: CrawlRow, url: string, page: ReturnType<typeof readPage>, size: number, now: Date): Promise<boolean> {
  const drafts = splitPassages(page.sections);
  const hash = createHash('sha256').update(page.title).update('\0').update(JSON.stringify(drafts)).digest('hex');
  return deps.db.transaction(async (trx) => {
    const ctx = { trx, tenantId: crawl.tenant_id, now };
    const existing = await scoped(ctx, 'kb_documents').where({ source_url: url }).forUpdate().first();
    if (existing && existing.content_hash === hash && existing.status === 'indexed') {
      await scoped(ctx, 'kb_documents').where({ id: existing.id }).update({ crawl_id: crawl.id });
      return false;
    }
    const filename = (new URL(url).pathname.split('/').filter(Boolean).pop() ?? 'index').slice(0, 255) || 'index';
    const id = existing?.id ?? uuidv7(now.getTime());
    const fields = {
      filename, content_type: 'text/html', size, title: page.title, status: 'indexed', error: null, source_url: url,
      crawl_id: crawl.id, content_hash: hash, updated_at: now, indexed_at: now, blob_key: null,
    };
    if (existing) await scoped(ctx, 'kb_documents').where({ id }).update(fields);
    else await insertScoped(ctx, 'kb_documents', { id, ...fields, created_at: now });
    const passages = await indexPassages(ctx, { document_id: id, title: page.title, locale: existing?.locale ?? 'en', visibility: 'public' }, drafts);
    await scoped(ctx, 'kb_documents').where({ id }).update({ passages });
    return true;
  });
}
