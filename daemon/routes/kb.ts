import { route } from '../route.js';
import { uploadParts } from '../multipart.js';
import { ListOf, PageQuery } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { createCategory, deleteCategory, listCategories, updateCategory } from '../../src/kb/categories.js';
import {
  createArticle, deleteArticle, getArticle, getPublicArticle, listArticles, listPublicArticles, updateArticle,
} from '../../src/kb/articles.js';
import { deleteDocument, getDocument, listDocuments, replaceDocument, uploadDocument } from '../../src/kb/documents.js';
import { getCrawl, startCrawl } from '../../src/kb/crawler.js';
import { ask } from '../../src/kb/ask.js';
import {
  KbAnswer, KbArticle, KbArticleCreate, KbArticleListQuery, KbArticlePatch, KbAsk, KbCategory, KbCategoryCreate, KbCategoryPatch,
  KbCrawl, KbCrawlQueued, KbCrawlStart, KbDocument, KbDocumentListQuery, KbPublicArticle, KbPublicArticleParams, KbPublicListQuery,
} from '../../src/kb/schemas.js';

/** The knowledge base (SPEC "Knowledge base", CONTRACT §15): categories, articles, documents, crawls, ask. */
const tags = ['kb'];
const UPLOAD = {
  field: 'file', maxFiles: 1,
  description: 'One part `file`: a PDF, DOCX, XLSX, Markdown or plain text document (sniffed from its bytes; others 415), at most 20 MB (413)',
};

export const kbRoutes = [
  // Categories
  route({
    method: 'GET', url: '/kb-categories', access: { kind: 'token', scope: 'kb:read' }, summary: 'List knowledge base categories', tags,
    schema: { querystring: PageQuery, response: { 200: ListOf(KbCategory) } },
    handler: (ctx, { query }) => listCategories(ctx, query),
  }),
  route({
    method: 'GET', url: '/kb-categories/public', access: { kind: 'tenant' }, summary: 'Public knowledge base categories (tenant from header or host)', tags,
    operationId: 'kbCategories.public.list',
    schema: { querystring: PageQuery, response: { 200: ListOf(KbCategory) } },
    handler: (ctx, { query }) => listCategories(ctx, query, true),
  }),
  route({
    method: 'POST', url: '/kb-categories', access: { kind: 'token', scope: 'kb:write' }, summary: 'Create a category', tags,
    errors: ['already_exists'],
    schema: { body: KbCategoryCreate, response: { 201: KbCategory } }, status: 201,
    example: { body: { name: 'Getting started', slug: 'getting-started', visibility: 'public' } },
    handler: (ctx, { body }) => createCategory(ctx, body),
  }),
  route({
    method: 'PATCH', url: '/kb-categories/:id', access: { kind: 'token', scope: 'kb:write' }, summary: 'Change a category', tags,
    errors: ['already_exists'],
    schema: { params: IdParams, body: KbCategoryPatch, response: { 200: KbCategory } },
    example: { body: { position: 2 } },
    handler: (ctx, { params, body }) => updateCategory(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/kb-categories/:id', access: { kind: 'token', scope: 'kb:delete' }, summary: 'Delete an empty category', tags,
    errors: ['conflict'],
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteCategory(ctx, params.id),
  }),
  // Articles
  route({
    method: 'GET', url: '/kb-articles', access: { kind: 'token', scope: 'kb:read' }, summary: 'List articles (q searches the retrieval index)', tags,
    schema: { querystring: KbArticleListQuery, response: { 200: ListOf(KbArticle) } },
    handler: (ctx, { query }) => listArticles(ctx, query),
  }),
  route({
    method: 'GET', url: '/kb-articles/public', access: { kind: 'tenant' }, summary: 'Published public articles (tenant from header or host; q searches)', tags,
    operationId: 'kbArticles.public.list',
    schema: { querystring: KbPublicListQuery, response: { 200: ListOf(KbPublicArticle) } },
    handler: (ctx, { query }) => listPublicArticles(ctx, query),
  }),
  route({
    method: 'GET', url: '/kb-articles/public/:locale/:slug', access: { kind: 'tenant' }, summary: 'One published public article', tags,
    operationId: 'kbArticles.public.get',
    schema: { params: KbPublicArticleParams, response: { 200: KbPublicArticle } },
    handler: (ctx, { params }) => getPublicArticle(ctx, params.locale, params.slug),
  }),
  route({
    method: 'POST', url: '/kb-articles/public/ask', access: { kind: 'tenant' }, summary: "Ask the help centre: an extractive answer with citations from public articles and documents", tags,
    operationId: 'kbArticles.public.ask',
    description: 'The same answer as POST /kb-documents/ask, over public sources only, for customers and anonymous visitors (tenant from header or host).',
    transaction: false,
    schema: { body: KbAsk, response: { 200: KbAnswer } },
    example: { body: { query: 'How do I reset my password?' } },
    handler: (ctx, { body }) => ask(ctx, body, { includeInternal: false }),
  }),
  route({
    method: 'POST', url: '/kb-articles', access: { kind: 'token', scope: 'kb:write' }, summary: 'Create an article (Markdown body)', tags,
    errors: ['already_exists'],
    schema: { body: KbArticleCreate, response: { 201: KbArticle } }, status: 201,
    example: { body: { category_id: '0190a3c4-0000-7000-8000-000000000000', title: 'Reset your password', slug: 'reset-password', body: '# Reset\n\nUse the link on the sign-in page.', status: 'published' } },
    handler: (ctx, { body }) => createArticle(ctx, body),
  }),
  route({
    method: 'GET', url: '/kb-articles/:id', access: { kind: 'token', scope: 'kb:read' }, summary: 'An article', tags,
    schema: { params: IdParams, response: { 200: KbArticle } },
    handler: (ctx, { params }) => getArticle(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/kb-articles/:id', access: { kind: 'token', scope: 'kb:write' }, summary: 'Change an article (publishing puts it in the index)', tags,
    errors: ['already_exists'],
    schema: { params: IdParams, body: KbArticlePatch, response: { 200: KbArticle } },
    example: { body: { status: 'published' } },
    handler: (ctx, { params, body }) => updateArticle(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/kb-articles/:id', access: { kind: 'token', scope: 'kb:delete' }, summary: 'Delete an article and its passages', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteArticle(ctx, params.id),
  }),
  // Documents, crawls, ask
  route({
    method: 'GET', url: '/kb-documents', access: { kind: 'token', scope: 'kb_documents:read' }, summary: 'Uploaded and crawled source documents', tags,
    schema: { querystring: KbDocumentListQuery, response: { 200: ListOf(KbDocument) } },
    handler: (ctx, { query }) => listDocuments(ctx, query),
  }),
  route({
    method: 'POST', url: '/kb-documents', access: { kind: 'token', scope: 'kb_documents:write' }, summary: 'Upload a document to ingest (the kb-ingest job indexes it)', tags,
    errors: ['validation_failed', 'payload_too_large', 'unsupported_media_type'],
    multipart: UPLOAD,
    schema: { response: { 202: KbDocument } }, status: 202,
    handler: (ctx, { request }) => uploadDocument(ctx, uploadParts(request)),
  }),
  route({
    method: 'POST', url: '/kb-documents/ask', access: { kind: 'token', scope: 'kb_documents:read' }, summary: 'Ask the knowledge base: an extractive answer with [n] citations', tags,
    description: 'Staff see internal articles too; other callers public sources only. Deterministic: the same query over the same index gives the same answer.',
    transaction: false,
    schema: { body: KbAsk, response: { 200: KbAnswer } },
    example: { body: { query: 'How do I reset my password?', top_k: 5 } },
    handler: (ctx, { body }) => ask(ctx, body),
  }),
  route({
    method: 'POST', url: '/kb-documents/crawl', access: { kind: 'token', scope: 'kb_documents:write' }, summary: 'Crawl a documentation site (same origin, robots.txt obeyed)', tags,
    schema: { body: KbCrawlStart, response: { 202: KbCrawlQueued } }, status: 202,
    example: { body: { url: 'https://docs.example.com/', max_pages: 50 } },
    handler: (ctx, { body }) => startCrawl(ctx, body),
  }),
  route({
    method: 'GET', url: '/kb-documents/:id', access: { kind: 'token', scope: 'kb_documents:read' }, summary: 'A document and its ingestion status', tags,
    schema: { params: IdParams, response: { 200: KbDocument } },
    handler: (ctx, { params }) => getDocument(ctx, params.id),
  }),
  route({
    method: 'PUT', url: '/kb-documents/:id', access: { kind: 'token', scope: 'kb_documents:write' }, summary: "Replace a document's file (it is ingested again)", tags,
    errors: ['conflict', 'validation_failed', 'payload_too_large', 'unsupported_media_type'],
    multipart: UPLOAD,
    schema: { params: IdParams, response: { 202: KbDocument } }, status: 202,
    handler: (ctx, { params, request }) => replaceDocument(ctx, params.id, uploadParts(request)),
  }),
  route({
    method: 'DELETE', url: '/kb-documents/:id', access: { kind: 'token', scope: 'kb_documents:delete' }, summary: 'Delete a document and every passage of it', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteDocument(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/kb-crawls/:id', access: { kind: 'token', scope: 'kb_documents:read' }, summary: 'A crawl and its progress', tags,
    schema: { params: IdParams, response: { 200: KbCrawl } },
    handler: (ctx, { params }) => getCrawl(ctx, params.id),
  }),
];
