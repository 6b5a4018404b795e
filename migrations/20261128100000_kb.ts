import type { Knex } from 'knex';

/**
 * The knowledge base (issue 17, CONTRACT §15).
 *
 * - `kb_categories`, `kb_articles`: Markdown articles (with their sanitised HTML), per-locale slugs.
 * - `kb_documents`: uploaded or crawled sources; the bytes live in the blob store (`blob_key`),
 *   the `kb-ingest` job turns them into passages. A crawled page keeps its `source_url` and the
 *   hash of its main text, so a re-crawl re-indexes only pages whose text changed.
 * - `kb_crawls`: crawler runs and their progress.
 * - `kb_passages`: the retrieval index. One row per passage of an article or a document, with its
 *   heading path; `tsv` weighs the title (A), the heading path (B) and the text (C) under the text
 *   search configuration of the passage's locale. A GIN index over (tenant_id, tsv) (btree_gin)
 *   answers the match; `kb_terms` keeps document frequencies per lexeme (BM25-style weighting).
 *   pg_trgm gives fuzzy title matching.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE EXTENSION IF NOT EXISTS btree_gin;
    CREATE EXTENSION IF NOT EXISTS pg_trgm;

    CREATE TABLE kb_categories (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      name        text NOT NULL,
      slug        text NOT NULL,
      description text,
      position    integer NOT NULL DEFAULT 0,
      visibility  text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'internal')),
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      CONSTRAINT kb_categories_slug UNIQUE (tenant_id, slug)
    );
    CREATE INDEX kb_categories_order ON kb_categories (tenant_id, position, name);

    CREATE TABLE kb_articles (
      tenant_id    uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id           uuid NOT NULL,
      category_id  uuid NOT NULL,
      title        text NOT NULL,
      slug         text NOT NULL,
      body         text NOT NULL,
      body_html    text NOT NULL,
      locale       text NOT NULL,
      status       text NOT NULL CHECK (status IN ('draft', 'published')),
      visibility   text NOT NULL CHECK (visibility IN ('public', 'internal')),
      author_id    uuid,
      published_at timestamptz,
      created_at   timestamptz NOT NULL,
      updated_at   timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      CONSTRAINT kb_articles_locale_slug UNIQUE (tenant_id, locale, slug),
      FOREIGN KEY (tenant_id, category_id) REFERENCES kb_categories (tenant_id, id) ON DELETE RESTRICT,
      FOREIGN KEY (tenant_id, author_id) REFERENCES users (tenant_id, id) ON DELETE SET NULL (author_id)
    );
    CREATE INDEX kb_articles_list ON kb_articles (tenant_id, status, locale, updated_at DESC);
    CREATE INDEX kb_articles_category ON kb_articles (tenant_id, category_id);

    CREATE TABLE kb_crawls (
      tenant_id     uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id            uuid NOT NULL,
      url           text NOT NULL,
      max_pages     integer NOT NULL,
      include       jsonb NOT NULL DEFAULT '[]',
      exclude       jsonb NOT NULL DEFAULT '[]',
      status        text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
      pages_fetched integer NOT NULL DEFAULT 0,
      pages_indexed integer NOT NULL DEFAULT 0,
      errors        jsonb NOT NULL DEFAULT '[]',
      created_by    uuid,
      created_at    timestamptz NOT NULL,
      started_at    timestamptz,
      finished_at   timestamptz,
      PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX kb_crawls_queue ON kb_crawls (tenant_id, created_at) WHERE status IN ('queued', 'running');

    CREATE TABLE kb_documents (
      tenant_id    uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id           uuid NOT NULL,
      filename     text NOT NULL,
      content_type text NOT NULL,
      size         bigint NOT NULL,
      blob_key     text,
      title        text,
      locale       text NOT NULL DEFAULT 'en',
      status       text NOT NULL CHECK (status IN ('queued', 'processing', 'indexed', 'failed')),
      error        text,
      passages     integer NOT NULL DEFAULT 0,
      source_url   text,
      crawl_id     uuid,
      content_hash text,
      created_by   uuid,
      created_at   timestamptz NOT NULL,
      updated_at   timestamptz NOT NULL,
      indexed_at   timestamptz,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, crawl_id) REFERENCES kb_crawls (tenant_id, id) ON DELETE SET NULL (crawl_id)
    );
    CREATE UNIQUE INDEX kb_documents_source_url ON kb_documents (tenant_id, source_url) WHERE source_url IS NOT NULL;
    CREATE INDEX kb_documents_list ON kb_documents (tenant_id, created_at DESC, id DESC);
    CREATE INDEX kb_documents_queue ON kb_documents (tenant_id, created_at) WHERE status IN ('queued', 'processing');

    CREATE TABLE kb_passages (
      tenant_id   uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      id          uuid NOT NULL,
      article_id  uuid,
      document_id uuid,
      position    integer NOT NULL,
      title       text NOT NULL,
      heading     text NOT NULL DEFAULT '',
      body        text NOT NULL,
      config      regconfig NOT NULL,
      visibility  text NOT NULL CHECK (visibility IN ('public', 'internal')),
      tsv         tsvector GENERATED ALWAYS AS (
                    setweight(to_tsvector(config, title), 'A') ||
                    setweight(to_tsvector(config, heading), 'B') ||
                    setweight(to_tsvector(config, body), 'C')) STORED,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, article_id) REFERENCES kb_articles (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, document_id) REFERENCES kb_documents (tenant_id, id) ON DELETE CASCADE,
      CHECK ((article_id IS NULL) <> (document_id IS NULL))
    );
    CREATE INDEX kb_passages_tsv ON kb_passages USING gin (tenant_id, tsv);
    CREATE INDEX kb_passages_article ON kb_passages (tenant_id, article_id) WHERE article_id IS NOT NULL;
    CREATE INDEX kb_passages_document ON kb_passages (tenant_id, document_id) WHERE document_id IS NOT NULL;

    -- Document frequency of every lexeme per (tenant, configuration); lexeme '' holds the passage count.
    CREATE TABLE kb_terms (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      config    regconfig NOT NULL,
      lexeme    text NOT NULL,
      df        integer NOT NULL,
      PRIMARY KEY (tenant_id, config, lexeme)
    );
    -- A query word found nowhere is looked up here by trigram similarity (a typo finds its lexeme).
    CREATE INDEX kb_terms_trgm ON kb_terms USING gin (tenant_id, config, lexeme gin_trgm_ops);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS kb_terms, kb_passages, kb_documents, kb_crawls, kb_articles, kb_categories');
}
