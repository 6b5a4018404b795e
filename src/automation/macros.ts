import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { isUniqueViolation } from '../db/tenant-scope.js';
import { diff, recordAudit } from '../audit/service.js';
import { applyTicketChanges, type TicketChangeSet } from '../tickets/changes.js';
import { loadVisibleTicket } from '../tickets/visibility.js';
import { ticketOut } from '../tickets/output.js';
import type { TicketOut } from '../tickets/schemas.js';
import { Status } from '../vocab/models.js';
import { MacroRecord } from './models.js';
import { actionProblems, resolveStatus } from './actions.js';
import { renderPlaceholders } from './placeholders.js';
import { postReply } from './replies.js';
import type { Macro, MacroCreate, MacroUpdate } from './schemas.js';

/**
 * Macros: named lists of `set_status`, `add_tag` and `post_reply` actions an agent applies to a
 * ticket in one step (`POST /tickets/{id}/macros/{macroId}/apply`, CONTRACT §4). Applying posts the
 * replies (placeholders filled for the ticket, as the applying agent), then makes one change set
 * of the rest through the tickets' change function, so every change records its own event and the
 * hooks (SLA, routing) run. A macro with several `set_status` actions ends in the last one.
 */
export function macroOut(row: MacroRecord): Macro {
  return { id: row.id, name: row.name, actions: row.actions, created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)! };
}

async function loadMacro(ctx: Ctx, id: string): Promise<MacroRecord> {
  const row = await MacroRecord.findIn(ctx, id);
  if (!row) throw errors.notFound('macro', id);
  return row;
}

async function saveName<T>(name: string | undefined, write: () => PromiseLike<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'macros_name')) throw errors.alreadyExists('macro', 'name', name ?? '');
    throw error;
  }
}

async function checkActions(ctx: Ctx, actions: MacroCreate['actions']): Promise<void> {
  const problems = await actionProblems(ctx, actions);
  if (problems.length) throw errors.validation(problems);
}

export async function listMacros(ctx: Ctx, query: PageInput): Promise<Page<Macro>> {
  return paginatePage<MacroRecord, Macro>(query, MacroRecord.scoped(ctx).orderByRaw('lower(macros.name)').orderBy('macros.id'), macroOut);
}

export async function getMacro(ctx: Ctx, id: string): Promise<Macro> {
  return macroOut(await loadMacro(ctx, id));
}

export async function createMacro(ctx: Ctx, input: MacroCreate): Promise<Macro> {
  await checkActions(ctx, input.actions);
  const name = input.name.trim();
  const row = await saveName(name, () => MacroRecord.insertIn(ctx, { name, actions: input.actions, created_at: ctx.now, updated_at: ctx.now }));
  await recordAudit(ctx, { action: 'macro.created', resourceType: 'macro', resourceId: row.id, changes: { name, actions: input.actions } });
  return macroOut(row);
}

export async function updateMacro(ctx: Ctx, id: string, input: MacroUpdate): Promise<Macro> {
  const before = await loadMacro(ctx, id);
  const columns: Record<string, unknown> = {};
  if (input.name !== undefined) columns.name = input.name.trim();
  if (input.actions !== undefined) {
    await checkActions(ctx, input.actions);
    columns.actions = input.actions;
  }
  const changes = diff(before as unknown as Record<string, unknown>, { ...before, ...columns }, ['name', 'actions']);
  if (!Object.keys(changes).length) return macroOut(before);
  const [after] = await saveName(columns.name as string | undefined, () =>
    MacroRecord.scoped(ctx).where('macros.id', id).patch({ ...columns, updated_at: ctx.now } as Partial<MacroRecord>).returning('*'));
  await recordAudit(ctx, { action: 'macro.updated', resourceType: 'macro', resourceId: id, changes });
  return macroOut(after!);
}

export async function deleteMacro(ctx: Ctx, id: string): Promise<void> {
  const macro = await loadMacro(ctx, id);
  await MacroRecord.scoped(ctx).where('macros.id', id).delete();
  await recordAudit(ctx, { action: 'macro.deleted', resourceType: 'macro', resourceId: id, changes: { name: macro.name } });
}

export async function applyMacro(ctx: Ctx, ticketId: string, macroId: string): Promise<TicketOut> {
  const ticket = await loadVisibleTicket(ctx, ticketId, { forUpdate: true });
  const macro = await loadMacro(ctx, macroId);
  const status = (await Status.findIn(ctx, ticket.status_id))!;
  if (status.category === 'closed') {
    throw errors.conflict(`Ticket ${ticket.ticket_number} is closed; a closed ticket is final`, { reason: 'ticket_closed' });
  }
  const changes: TicketChangeSet = {};
  for (const action of macro.actions) {
    if (action.type === 'set_status') {
      const target = await resolveStatus(ctx, String(action.value));
      // Checked when saved; a status deleted since makes the macro unusable until it is edited.
      if (!target) throw errors.conflict(`Macro ${macro.name} sets status ${String(action.value)}, which no longer exists`, { reason: 'macro_outdated' });
      changes.status_id = target.id;
    } else if (action.type === 'add_tag') {
      (changes.add_tags ??= []).push(String(action.value));
    }
  }
  for (const action of macro.actions) {
    if (action.type === 'post_reply') await postReply(ctx, ticket, await renderPlaceholders(ctx, String(action.value), ticket));
  }
  // Re-read: a reply stamped the first response; the change set applies to the row as it stands.
  const current = await loadVisibleTicket(ctx, ticketId, { forUpdate: true });
  return ticketOut(await applyTicketChanges(ctx, current, changes));
}
