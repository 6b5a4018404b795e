import { Type, type Static } from '@sinclair/typebox';
import { HttpUrl, NonBlank, Nullable, StringEnum, Timestamp } from '../core/schema-types.js';
import { pageParams } from '../core/pagination.js';

/** Knowledge base shapes (CONTRACT §15). */
const VISIBILITY = ['public', 'internal'] as const;
const STATUS = ['draft', 'published'] as const;
export const DOCUMENT_STATUS = ['queued', 'processing', 'indexed', 'failed'] as const;
export const CRAWL_STATUS = ['queued', 'running', 'completed', 'failed'] as const;

/** A slug: lower-case letters, digits and single hyphens. */
const Slug = Type.String({ minLength: 1, maxLength: 200, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' });
/** A BCP 47 language tag (`en`, `de`, `pt-BR`). */
const Locale = Type.String({ minLength: 2, maxLength: 35, pattern: '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$' });

export const KbCategory = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  slug: Type.String(),
  description: Nullable(Type.String()),
  position: Type.Integer(),
  visibility: StringEnum(VISIBILITY),
  created_at: Timestamp(),
  updated_at: Timestamp(),
}, { $id: 'KbCategory' });
export type KbCategory = Static<typeof KbCategory>;

export const KbCategoryCreate = Type.Object({
  name: NonBlank({ maxLength: 200 }),
  slug: Slug,
  description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  position: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
  visibility: Type.Optional(StringEnum(VISIBILITY)),
}, { $id: 'KbCategoryCreate', additionalProperties: false });
export type KbCategoryCreate = Static<typeof KbCategoryCreate>;

export const KbCategoryPatch = Type.Object({
  name: Type.Optional(NonBlank({ maxLength: 200 })),
  slug: Type.Optional(Slug),
  description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  position: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
  visibility: Type.Optional(StringEnum(VISIBILITY)),
}, { $id: 'KbCategoryPatch', additionalProperties: false });
export type KbCategoryPatch = Static<typeof KbCategoryPatch>;

export const KbArticle = Type.Object({
  id: Type.String({ format: 'uuid' }),
  category_id: Type.String({ format: 'uuid' }),
  title: Type.String(),
  slug: Type.String(),
  body: Type.String({ description: 'Markdown' }),
  body_html: Type.String({ description: 'The body rendered and sanitised' }),
  locale: Type.String(),
  status: StringEnum(STATUS),
  visibility: StringEnum(VISIBILITY),
  author_id: Nullable(Type.String({ format: 'uuid' })),
  published_at: Nullable(Timestamp()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
}, { $id: 'KbArticle' });
export type KbArticle = Static<typeof KbArticle>;

/** Articles of the public help centre: no author, no status (they are published and public). */
export const KbPublicArticle = Type.Object({
  id: Type.String({ format: 'uuid' }),
  category_id: Type.String({ format: 'uuid' }),
  title: Type.String(),
  slug: Type.String(),
  body: Type.String(),
  body_html: Type.String(),
  locale: Type.String(),
  published_at: Nullable(Timestamp()),
  updated_at: Timestamp(),
}, { $id: 'KbPublicArticle' });
export type KbPublicArticle = Static<typeof KbPublicArticle>;

export const KbArticleCreate = Type.Object({
  category_id: Type.String({ format: 'uuid' }),
  title: NonBlank({ maxLength: 300 }),
  slug: Slug,
  body: Type.String({ maxLength: 200_000 }),
  locale: Type.Optional(Locale),
  status: Type.Optional(StringEnum(STATUS)),
  visibility: Type.Optional(StringEnum(VISIBILITY)),
}, { $id: 'KbArticleCreate', additionalProperties: false });
export type KbArticleCreate = Static<typeof KbArticleCreate>;

export const KbArticlePatch = Type.Object({
  category_id: Type.Optional(Type.String({ format: 'uuid' })),
  title: Type.Optional(NonBlank({ maxLength: 300 })),
  slug: Type.Optional(Slug),
  body: Type.Optional(Type.String({ maxLength: 200_000 })),
  locale: Type.Optional(Locale),
  status: Type.Optional(StringEnum(STATUS)),
  visibility: Type.Optional(StringEnum(VISIBILITY)),
}, { $id: 'KbArticlePatch', additionalProperties: false });
export type KbArticlePatch = Static<typeof KbArticlePatch>;

export const KbArticleListQuery = Type.Object({
  ...pageParams,
  status: Type.Optional(StringEnum(STATUS)),
  category_id: Type.Optional(Type.String({ format: 'uuid' })),
  locale: Type.Optional(Locale),
  q: Type.Optional(Type.String({ maxLength: 500 })),
});
export type KbArticleListQuery = Static<typeof KbArticleListQuery>;

export const KbPublicListQuery = Type.Object({
  ...pageParams,
  category_id: Type.Optional(Type.String({ format: 'uuid' })),
  locale: Type.Optional(Locale),
  q: Type.Optional(Type.String({ maxLength: 500 })),
});
export type KbPublicListQuery = Static<typeof KbPublicListQuery>;

export const KbPublicArticleParams = Type.Object({ locale: Locale, slug: Slug });

export const KbDocument = Type.Object({
  id: Type.String({ format: 'uuid' }),
  filename: Type.String(),
  content_type: Type.String(),
  size: Type.Integer(),
  status: StringEnum(DOCUMENT_STATUS),
  error: Nullable(Type.String()),
  passages: Type.Integer(),
  source_url: Nullable(Type.String()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  indexed_at: Nullable(Timestamp()),
}, { $id: 'KbDocument' });
export type KbDocument = Static<typeof KbDocument>;

export const KbDocumentListQuery = Type.Object({
  ...pageParams,
  status: Type.Optional(StringEnum(DOCUMENT_STATUS)),
});
export type KbDocumentListQuery = Static<typeof KbDocumentListQuery>;

const Prefix = Type.String({ minLength: 1, maxLength: 500, pattern: '^/' });

export const KbCrawlStart = Type.Object({
  url: HttpUrl({ maxLength: 2000 }),
  max_pages: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
  include: Type.Optional(Type.Array(Prefix, { maxItems: 50, description: 'Path prefixes to crawl (all when absent)' })),
  exclude: Type.Optional(Type.Array(Prefix, { maxItems: 50, description: 'Path prefixes to skip' })),
}, { $id: 'KbCrawlStart', additionalProperties: false });
export type KbCrawlStart = Static<typeof KbCrawlStart>;

export const KbCrawlQueued = Type.Object({ id: Type.String({ format: 'uuid' }), status: StringEnum(CRAWL_STATUS) }, { $id: 'KbCrawlQueued' });

export const KbCrawl = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  status: StringEnum(CRAWL_STATUS),
  max_pages: Type.Integer(),
  pages_fetched: Type.Integer(),
  pages_indexed: Type.Integer(),
  errors: Type.Array(Type.Object({ url: Type.String(), message: Type.String() })),
  created_at: Timestamp(),
  started_at: Nullable(Timestamp()),
  finished_at: Nullable(Timestamp()),
}, { $id: 'KbCrawl' });
export type KbCrawl = Static<typeof KbCrawl>;

export const KbAsk = Type.Object({
  query: NonBlank({ maxLength: 1000 }),
  top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 5 })),
  locale: Type.Optional(Locale),
}, { $id: 'KbAsk', additionalProperties: false });
export type KbAsk = Static<typeof KbAsk>;

export const KbPassage = Type.Object({
  source: StringEnum(['article', 'document'] as const),
  id: Type.String({ format: 'uuid', description: 'The article or document' }),
  title: Type.String(),
  heading: Type.String({ description: 'The heading path, " > " between levels' }),
  source_url: Nullable(Type.String()),
  text: Type.String(),
  score: Type.Number(),
}, { $id: 'KbPassage' });
export type KbPassage = Static<typeof KbPassage>;

export const KbAnswer = Type.Object({
  query: Type.String(),
  answer: Nullable(Type.String({ description: 'Sentences of the passages, each followed by its [n] citation; null when nothing is relevant' })),
  passages: Type.Array(KbPassage),
}, { $id: 'KbAnswer' });
export type KbAnswer = Static<typeof KbAnswer>;
