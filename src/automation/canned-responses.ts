import type { Ctx } from '../core/context.js';
import { errors, isAppError } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type Page } from '../core/pagination.js';
import { isUniqueViolation } from '../db/tenant-scope.js';
import { diff, recordAudit } from '../audit/service.js';
import { loadVisibleTicket } from '../tickets/visibility.js';
import { CannedResponseRecord } from './models.js';
import { placeholderProblem, placeholdersIn, renderPlaceholders } from './placeholders.js';
import type { CannedResponse, CannedResponseCreate, CannedResponseListQuery, CannedResponseUpdate } from './schemas.js';

/**
 * Canned responses: reply texts an agent inserts by shortcut (`/refund`), with placeholders
 * (`{{ticket.number}}`, `{{customer.name}}`…, src/automation/placeholders.ts). Shortcuts are unique
 * per tenant. `POST /canned-responses/{id}/render {ticket_id}` fills the placeholders for a ticket,
 * so the composer shows the text the customer will read.
 */
const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export function cannedResponseOut(row: CannedResponseRecord): CannedResponse {
  return {
    id: row.id, title: row.title, shortcut: row.shortcut, body: row.body, placeholders: placeholdersIn(row.body),
    created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)!,
  };
}

async function loadResponse(ctx: Ctx, id: string): Promise<CannedResponseRecord> {
  const row = await CannedResponseRecord.findIn(ctx, id);
  if (!row) throw errors.notFound('canned response', id);
  return row;
}

async function saveShortcut<T>(shortcut: string | undefined, write: () => PromiseLike<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'canned_responses_shortcut')) throw errors.alreadyExists('canned response', 'shortcut', shortcut ?? '');
    throw error;
  }
}

function checkBody(body: string | undefined): void {
  const problem = body === undefined ? null : placeholderProblem(body);
  if (problem) throw errors.invalid('body', problem);
}

export async function listCannedResponses(ctx: Ctx, query: CannedResponseListQuery): Promise<Page<CannedResponse>> {
  const qb = CannedResponseRecord.scoped(ctx).orderBy('canned_responses.shortcut').orderBy('canned_responses.id');
  const q = query.q?.trim();
  if (q) {
    qb.where((w) => w.where('canned_responses.shortcut', 'like', `${escapeLike(q.toLowerCase())}%`)
      .orWhere('canned_responses.title', 'ilike', `%${escapeLike(q)}%`));
  }
  return paginatePage<CannedResponseRecord, CannedResponse>(query, qb, cannedResponseOut);
}

export async function getCannedResponse(ctx: Ctx, id: string): Promise<CannedResponse> {
  return cannedResponseOut(await loadResponse(ctx, id));
}

export async function createCannedResponse(ctx: Ctx, input: CannedResponseCreate): Promise<CannedResponse> {
  checkBody(input.body);
  const row = await saveShortcut(input.shortcut, () => CannedResponseRecord.insertIn(ctx, {
    title: input.title.trim(), shortcut: input.shortcut, body: input.body, created_at: ctx.now, updated_at: ctx.now,
  }));
  await recordAudit(ctx, { action: 'canned_response.created', resourceType: 'canned_response', resourceId: row.id, changes: { title: row.title, shortcut: row.shortcut } });
  return cannedResponseOut(row);
}

export async function updateCannedResponse(ctx: Ctx, id: string, input: CannedResponseUpdate): Promise<CannedResponse> {
  const before = await loadResponse(ctx, id);
  checkBody(input.body);
  const columns: Record<string, unknown> = {};
  if (input.title !== undefined) columns.title = input.title.trim();
  if (input.shortcut !== undefined) columns.shortcut = input.shortcut;
  if (input.body !== undefined) columns.body = input.body;
  const changes = diff(before as unknown as Record<string, unknown>, { ...before, ...columns }, ['title', 'shortcut', 'body']);
  if (!Object.keys(changes).length) return cannedResponseOut(before);
  const [after] = await saveShortcut(input.shortcut, () =>
    CannedResponseRecord.scoped(ctx).where('canned_responses.id', id).patch({ ...columns, updated_at: ctx.now } as Partial<CannedResponseRecord>).returning('*'));
  await recordAudit(ctx, { action: 'canned_response.updated', resourceType: 'canned_response', resourceId: id, changes });
  return cannedResponseOut(after!);
}

export async function deleteCannedResponse(ctx: Ctx, id: string): Promise<void> {
  const row = await loadResponse(ctx, id);
  await CannedResponseRecord.scoped(ctx).where('canned_responses.id', id).delete();
  await recordAudit(ctx, { action: 'canned_response.deleted', resourceType: 'canned_response', resourceId: id, changes: { shortcut: row.shortcut } });
}

/** The ticket is a value of the body, so an unknown one is 422 `ticket_id` (as the desk's references). */
export async function renderCannedResponse(ctx: Ctx, id: string, ticketId: string): Promise<{ body: string }> {
  const response = await loadResponse(ctx, id);
  const ticket = await loadVisibleTicket(ctx, ticketId).catch((error: unknown) => {
    if (isAppError(error) && error.code === 'resource_not_found') throw errors.invalid('ticket_id', 'does not exist');
    throw error;
  });
  return { body: await renderPlaceholders(ctx, response.body, ticket) };
}
