import type { Ctx } from '../core/context.js';
import type { FieldProblem } from '../core/errors.js';
import { scoped } from '../db/tenant-scope.js';
import { Priority, Status, TicketType } from '../vocab/models.js';

/**
 * Looks up the records a ticket write names (status, priority, type, assignee), in ctx's tenant
 * only: an unknown id and another tenant's id are the same problem, `<field> does not exist`
 * (422; the ticket itself is the resource of the route, these are values of its body).
 */
export interface StaffUser { id: string; name: string; email: string; role: string; active: boolean }

export async function findStatus(ctx: Ctx, id: string, field: string, problems: FieldProblem[]): Promise<Status | undefined> {
  const row = await Status.findIn(ctx, id);
  if (!row) problems.push({ field, message: 'does not exist' });
  return row;
}

export async function findPriority(ctx: Ctx, id: string, field: string, problems: FieldProblem[]): Promise<Priority | undefined> {
  const row = await Priority.findIn(ctx, id);
  if (!row) problems.push({ field, message: 'does not exist' });
  return row;
}

/** An active type (an inactive one stays on its tickets but is not chosen anew). */
export async function findActiveType(ctx: Ctx, id: string, field: string, problems: FieldProblem[]): Promise<TicketType | undefined> {
  const row = await TicketType.findIn(ctx, id);
  if (!row) problems.push({ field, message: 'does not exist' });
  else if (!row.active) problems.push({ field, message: 'is an inactive ticket type' });
  return row?.active ? row : undefined;
}

/** An assignee must be an active admin or agent of the tenant. */
export async function findAssignee(ctx: Ctx, id: string, field: string, problems: FieldProblem[]): Promise<StaffUser | undefined> {
  const row = await scoped<StaffUser>(ctx, 'users').where('id', id).first('id', 'name', 'email', 'role', 'active');
  if (!row) problems.push({ field, message: 'does not exist' });
  else if (row.role === 'customer') problems.push({ field, message: 'is not an agent or admin' });
  else if (!row.active) problems.push({ field, message: 'is a deactivated user' });
  return row && row.role !== 'customer' && row.active ? row : undefined;
}

export async function userName(ctx: Ctx, id: string | null): Promise<string | null> {
  if (!id) return null;
  const row = await scoped<{ name: string }>(ctx, 'users').where('id', id).first('name');
  return row?.name ?? null;
}
