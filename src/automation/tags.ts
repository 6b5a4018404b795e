import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type Page } from '../core/pagination.js';
import { isUniqueViolation, scoped } from '../db/tenant-scope.js';
import { diff, recordAudit } from '../audit/service.js';
import { normaliseTags } from '../tickets/tags.js';
import { TagRecord } from './models.js';
import type { Tag, TagCreate, TagListQuery, TagUpdate } from './schemas.js';

/**
 * The tag catalogue (SPEC "Tags"): names with a hex colour. Tickets carry tag names freely
 * (`tickets.tags`); the catalogue colours them and feeds autocomplete. Renaming or deleting a
 * catalogued tag renames or removes it on every ticket of the tenant, in one set-based UPDATE over
 * the tags GIN index: a tag is one concept, wherever it is written.
 */
export const DEFAULT_TAG_COLOR = '#6b7280';
const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export function tagOut(row: TagRecord): Tag {
  return { id: row.id, name: row.name, color: row.color, created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)! };
}

async function loadTag(ctx: Ctx, id: string): Promise<TagRecord> {
  const row = await TagRecord.findIn(ctx, id);
  if (!row) throw errors.notFound('tag', id);
  return row;
}

async function saveName<T>(name: string | undefined, write: () => PromiseLike<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'tags_name')) throw errors.alreadyExists('tag', 'name', name ?? '');
    throw error;
  }
}

const nameOf = (raw: string) => normaliseTags([raw])[0]!;

export async function listTags(ctx: Ctx, query: TagListQuery): Promise<Page<Tag>> {
  const qb = TagRecord.scoped(ctx).orderBy('tags.name').orderBy('tags.id');
  if (query.q?.trim()) qb.where('tags.name', 'like', `${escapeLike(query.q.trim().toLowerCase())}%`);
  return paginatePage<TagRecord, Tag>(query, qb, tagOut);
}

export async function getTag(ctx: Ctx, id: string): Promise<Tag> {
  return tagOut(await loadTag(ctx, id));
}

export async function createTag(ctx: Ctx, input: TagCreate): Promise<Tag> {
  const name = nameOf(input.name);
  const color = (input.color ?? DEFAULT_TAG_COLOR).toLowerCase();
  const row = await saveName(name, () => TagRecord.insertIn(ctx, { name, color, created_at: ctx.now, updated_at: ctx.now }));
  await recordAudit(ctx, { action: 'tag.created', resourceType: 'tag', resourceId: row.id, changes: { name, color } });
  return tagOut(row);
}

export async function updateTag(ctx: Ctx, id: string, input: TagUpdate): Promise<Tag> {
  const before = await loadTag(ctx, id);
  const columns: Record<string, unknown> = {};
  if (input.name !== undefined) columns.name = nameOf(input.name);
  if (input.color !== undefined) columns.color = input.color.toLowerCase();
  const changes = diff(before as unknown as Record<string, unknown>, { ...before, ...columns }, ['name', 'color']);
  if (!Object.keys(changes).length) return tagOut(before);
  const [after] = await saveName(columns.name as string | undefined, () =>
    TagRecord.scoped(ctx).where('tags.id', id).patch({ ...columns, updated_at: ctx.now } as Partial<TagRecord>).returning('*'));
  if (changes.name) await renameOnTickets(ctx, before.name, after!.name);
  await recordAudit(ctx, { action: 'tag.updated', resourceType: 'tag', resourceId: id, changes });
  return tagOut(after!);
}

export async function deleteTag(ctx: Ctx, id: string): Promise<void> {
  const tag = await loadTag(ctx, id);
  await TagRecord.scoped(ctx).where('tags.id', id).delete();
  const tickets = await scoped(ctx, 'tickets').whereRaw('tickets.tags @> ?::text[]', [[tag.name]])
    .update({ tags: ctx.trx.raw('array_remove(tickets.tags, ?)', [tag.name]) });
  await recordAudit(ctx, { action: 'tag.deleted', resourceType: 'tag', resourceId: id, changes: { name: tag.name, tickets } });
}

/** `from` becomes `to` on every ticket; a ticket that already had `to` keeps it once. */
async function renameOnTickets(ctx: Ctx, from: string, to: string): Promise<void> {
  await scoped(ctx, 'tickets').whereRaw('tickets.tags @> ?::text[]', [[from]]).update({
    tags: ctx.trx.raw('CASE WHEN ? = ANY(tickets.tags) THEN array_remove(tickets.tags, ?) ELSE array_replace(tickets.tags, ?, ?) END', [to, from, from, to]),
  });
}

/** Colours of catalogued names (uncatalogued names are absent). */
export async function tagColors(ctx: Ctx, names: readonly string[]): Promise<Map<string, string>> {
  if (!names.length) return new Map();
  const rows = await TagRecord.scoped(ctx).whereIn('tags.name', [...names]).select('name', 'color');
  return new Map(rows.map((r) => [r.name, r.color]));
}
