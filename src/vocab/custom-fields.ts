import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { isUniqueViolation, scoped } from '../db/tenant-scope.js';
import { diff, recordAudit } from '../audit/service.js';
import { lockConfigForChange } from '../db/config-cache.js';
import { CustomField, type CustomFieldKind } from './models.js';
import type { CustomFieldCreate, CustomFieldOut, CustomFieldUpdate } from './schemas.js';

/**
 * Ticket custom fields (SPEC "Configuration"): text, select (with options), bool, date. `key` and
 * `kind` are fixed once created, because stored values are keyed by the one and shaped by the other.
 * Keys that name a ticket field are reserved, since a create body may carry custom field values at
 * its top level (CONTRACT §4). A field whose key some ticket still carries a value for cannot be
 * deleted (`409 conflict`, `details.reason: "in_use"`); retire it with `active: false`.
 */
export const RESERVED_KEYS = new Set([
  'id', 'ticket_number', 'subject', 'body', 'body_html', 'requester', 'requester_id', 'type_id', 'status_id', 'priority_id',
  'assigned_agent_id', 'team_id', 'organization_id', 'channel', 'tags', 'custom_fields', 'summary', 'resolution_code',
  'sla', 'sla_due_at', 'first_responded_at', 'resolved_at', 'closed_at', 'snoozed_until', 'merged_into_id', 'created_at', 'reopened_count',
  'updated_at', 'is_private', 'attachments', 'priority', 'status', 'type', 'tag',
]);

export function customFieldOut(f: CustomField): CustomFieldOut {
  return {
    id: f.id, key: f.key, label: f.label, kind: f.kind, options: f.options ?? [], required: f.required, active: f.active,
    position: f.position, created_at: toRfc3339(f.created_at)!, updated_at: toRfc3339(f.updated_at)!,
  };
}

function optionProblems(kind: CustomFieldKind, options: string[] | undefined): FieldProblem[] {
  if (kind !== 'select') return options?.length ? [{ field: 'options', message: `are only for select fields, not ${kind}` }] : [];
  if (!options?.length) return [{ field: 'options', message: 'must list at least one option for a select field' }];
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  options.forEach((option, i) => {
    if (seen.has(option.trim())) problems.push({ field: `options.${i}`, message: 'repeats an earlier option' });
    seen.add(option.trim());
  });
  return problems;
}

async function load(ctx: Ctx, id: string): Promise<CustomField> {
  const row = await CustomField.findIn(ctx, id);
  if (!row) throw errors.notFound('custom_field', id);
  return row;
}

export async function listCustomFields(ctx: Ctx): Promise<{ data: CustomFieldOut[] }> {
  const rows = await CustomField.scoped(ctx).orderBy('position').orderBy('key');
  return { data: rows.map(customFieldOut) };
}

export async function getCustomField(ctx: Ctx, id: string): Promise<CustomFieldOut> {
  return customFieldOut(await load(ctx, id));
}

export async function createCustomField(ctx: Ctx, input: CustomFieldCreate): Promise<CustomFieldOut> {
  const problems = optionProblems(input.kind, input.options);
  if (RESERVED_KEYS.has(input.key)) problems.unshift({ field: 'key', message: 'names a ticket field and is reserved' });
  if (problems.length) throw errors.validation(problems);
  const row = await CustomField.insertIn(ctx, {
    key: input.key, label: input.label.trim(), kind: input.kind, options: (input.options ?? []).map((o) => o.trim()),
    required: input.required ?? false, active: input.active ?? true, position: input.position ?? 0,
    created_at: ctx.now, updated_at: ctx.now,
  }).catch((error: unknown) => {
    if (isUniqueViolation(error, 'custom_fields_key')) throw errors.alreadyExists('custom_field', 'key', input.key);
    throw error;
  });
  await recordAudit(ctx, { action: 'custom_field.created', resourceType: 'custom_field', resourceId: row.id, changes: { key: row.key, kind: row.kind, label: row.label } });
  return customFieldOut(row);
}

export async function updateCustomField(ctx: Ctx, id: string, input: CustomFieldUpdate): Promise<CustomFieldOut> {
  const before = await load(ctx, id);
  if (input.options !== undefined) {
    const problems = optionProblems(before.kind, input.options);
    if (problems.length) throw errors.validation(problems);
  }
  const columns: Record<string, unknown> = {};
  if (input.label !== undefined) columns.label = input.label.trim();
  if (input.options !== undefined) columns.options = input.options.map((o) => o.trim());
  for (const field of ['required', 'active', 'position'] as const) if (input[field] !== undefined) columns[field] = input[field];
  const changes = diff(before as unknown as Record<string, unknown>, { ...before, ...columns }, ['label', 'options', 'required', 'active', 'position']);
  if (!Object.keys(changes).length) return customFieldOut(before);
  const [after] = await CustomField.scoped(ctx).where('custom_fields.id', id).patch({ ...columns, updated_at: ctx.now } as never).returning('*') as unknown as CustomField[];
  await recordAudit(ctx, { action: 'custom_field.updated', resourceType: 'custom_field', resourceId: id, changes: { key: before.key, ...changes } });
  return customFieldOut(after!);
}

export async function deleteCustomField(ctx: Ctx, id: string): Promise<void> {
  const before = await load(ctx, id);
  // Wait for every ticket write that may be validating against the definition, and hold off new
  // ones until this commits, so no value slips in between the check and the delete: writes that
  // pinned the configuration hold its lock in share mode, the others share-lock the row.
  await lockConfigForChange(ctx);
  await CustomField.scoped(ctx).where('custom_fields.id', id).forUpdate();
  const inUse = await scoped(ctx, 'tickets').whereRaw('custom_fields \\? ?', [before.key]).first('id');
  if (inUse) {
    throw errors.conflict(`Custom field ${before.key} has values on tickets; set active to false to retire it`, { reason: 'in_use' });
  }
  await CustomField.scoped(ctx).where('custom_fields.id', id).delete();
  await recordAudit(ctx, { action: 'custom_field.deleted', resourceType: 'custom_field', resourceId: id, changes: { key: before.key, kind: before.kind } });
}
