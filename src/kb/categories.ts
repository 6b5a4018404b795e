import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { insertScoped, isUniqueViolation, scoped } from '../db/tenant-scope.js';
import { diff, recordAudit } from '../audit/service.js';
import type { KbCategory, KbCategoryCreate, KbCategoryPatch } from './schemas.js';
import { reindexCategory } from './articles.js';

/** Knowledge base categories (CONTRACT §15): staff CRUD, and the public list of public ones. */
interface CategoryRow {
  id: string; name: string; slug: string; description: string | null; position: number;
  visibility: 'public' | 'internal'; created_at: Date; updated_at: Date;
}

export function categoryOut(row: CategoryRow): KbCategory {
  return {
    id: row.id, name: row.name, slug: row.slug, description: row.description ?? null, position: row.position,
    visibility: row.visibility, created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)!,
  };
}

async function save<T>(slug: string | undefined, write: () => PromiseLike<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'kb_categories_slug')) throw errors.alreadyExists('kb_category', 'slug', slug ?? '');
    throw error;
  }
}

export async function loadCategory(ctx: Ctx, id: string): Promise<CategoryRow> {
  const row = await scoped<CategoryRow>(ctx, 'kb_categories').where({ id }).first();
  if (!row) throw errors.notFound('kb_category', id);
  return row;
}

export async function listCategories(ctx: Ctx, query: PageInput, publicOnly = false): Promise<Page<KbCategory>> {
  const qb = scoped(ctx, 'kb_categories').orderBy('position').orderBy('name').orderBy('id');
  if (publicOnly) qb.where('visibility', 'public');
  return paginatePage<CategoryRow, KbCategory>(query, qb, categoryOut);
}

export async function createCategory(ctx: Ctx, input: KbCategoryCreate): Promise<KbCategory> {
  const [row] = await save(input.slug, () => insertScoped<CategoryRow>(ctx, 'kb_categories', {
    id: uuidv7(ctx.now.getTime()), name: input.name.trim(), slug: input.slug, description: input.description ?? null,
    position: input.position ?? 0, visibility: input.visibility ?? 'public', created_at: ctx.now, updated_at: ctx.now,
  }));
  await recordAudit(ctx, { action: 'kb_category.created', resourceType: 'kb_category', resourceId: row!.id, changes: { name: row!.name, slug: row!.slug } });
  return categoryOut(row!);
}

export async function updateCategory(ctx: Ctx, id: string, input: KbCategoryPatch): Promise<KbCategory> {
  const before = await loadCategory(ctx, id);
  const columns: Record<string, unknown> = {};
  if (input.name !== undefined) columns.name = input.name.trim();
  if (input.slug !== undefined) columns.slug = input.slug;
  if (input.description !== undefined) columns.description = input.description;
  if (input.position !== undefined) columns.position = input.position;
  if (input.visibility !== undefined) columns.visibility = input.visibility;
  const changes = diff(before as unknown as Record<string, unknown>, { ...before, ...columns }, ['name', 'slug', 'description', 'position', 'visibility']);
  if (!Object.keys(changes).length) return categoryOut(before);
  const [after] = await save(input.slug, () => scoped(ctx, 'kb_categories').where({ id }).update({ ...columns, updated_at: ctx.now }).returning('*'));
  // An internal category makes its articles internal in the index (and public again when it opens).
  if (changes.visibility) await reindexCategory(ctx, id);
  await recordAudit(ctx, { action: 'kb_category.updated', resourceType: 'kb_category', resourceId: id, changes });
  return categoryOut(after as CategoryRow);
}

export async function deleteCategory(ctx: Ctx, id: string): Promise<void> {
  await loadCategory(ctx, id);
  const used = await scoped(ctx, 'kb_articles').where({ category_id: id }).first('id');
  if (used) throw errors.conflict('The category still has articles; move or delete them first');
  await scoped(ctx, 'kb_categories').where({ id }).delete();
  await recordAudit(ctx, { action: 'kb_category.deleted', resourceType: 'kb_category', resourceId: id });
}
