import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { scoped } from '../db/tenant-scope.js';
import { diff, recordAudit } from '../audit/service.js';
import { Priority, TicketType } from '../vocab/models.js';
import { defaultPolicyFor } from './defaults.js';
import type { EffectivePolicy } from './engine.js';
import type { SlaOverride, SlaOverridePatch, SlaPolicy, SlaPolicyPatch } from './schemas.js';
import { cachedConfig } from '../db/config-cache.js';

/**
 * SLA policies per priority (SPEC "SLA policy") and their overrides per ticket type and priority
 * (SPEC "Ticket-type SLA override"). A priority without a stored policy has the SPEC's default
 * row for its key. Editing either affects tickets created afterwards (CONTRACT §11): a ticket
 * fixes its effective policy at creation (and at a priority change).
 */

interface PolicyRow {
  priority_id: string;
  first_response_time_minutes: number;
  next_response_time_minutes: number;
  resolution_time_minutes: number;
  respect_business_hours: boolean;
  warn_percent: number;
  updated_at: Date;
}

interface OverrideRow {
  type_id: string;
  priority_id: string;
  resolve_hours: number | null;
  first_response_minutes: number | null;
  next_response_minutes: number | null;
  warn_percent: number | null;
  updated_at: Date;
}

const POLICY_FIELDS = ['first_response_time_minutes', 'next_response_time_minutes', 'resolution_time_minutes', 'respect_business_hours', 'warn_percent'] as const;
const OVERRIDE_FIELDS = ['resolve_hours', 'first_response_minutes', 'next_response_minutes', 'warn_percent'] as const;

function policyOut(priority: Priority, row: PolicyRow | undefined): SlaPolicy {
  if (row) {
    return {
      priority_id: priority.id, priority_key: priority.key,
      first_response_time_minutes: row.first_response_time_minutes, next_response_time_minutes: row.next_response_time_minutes,
      resolution_time_minutes: row.resolution_time_minutes, respect_business_hours: row.respect_business_hours,
      warn_percent: row.warn_percent, is_default: false, updated_at: toRfc3339(row.updated_at),
    };
  }
  const d = defaultPolicyFor(priority.key);
  return {
    priority_id: priority.id, priority_key: priority.key,
    first_response_time_minutes: d.first_response_minutes, next_response_time_minutes: d.next_response_minutes,
    resolution_time_minutes: d.resolution_minutes, respect_business_hours: d.respect_business_hours,
    warn_percent: d.warn_percent, is_default: true, updated_at: null,
  };
}

/** Every priority's policy, in the priorities' order. Bounded by the vocabulary: one page holds all. */
export async function listPolicies(ctx: Ctx): Promise<{ data: SlaPolicy[]; meta: { page: number; page_size: number; total: number } }> {
  const priorities = await Priority.scoped(ctx).orderBy([{ column: 'position' }, { column: 'id' }]);
  const rows: PolicyRow[] = await scoped(ctx, 'sla_policies').select('*');
  const byPriority = new Map(rows.map((r) => [r.priority_id, r]));
  const data = priorities.map((p) => policyOut(p, byPriority.get(p.id)));
  return { data, meta: { page: 1, page_size: Math.max(data.length, 1), total: data.length } };
}

async function loadPriority(ctx: Ctx, id: string): Promise<Priority> {
  const priority = await Priority.findIn(ctx, id);
  if (!priority) throw errors.notFound('priority', id);
  return priority;
}

/** Upsert: fields sent are set, the others keep their current (or default) value. */
export async function patchPolicy(ctx: Ctx, priorityId: string, input: SlaPolicyPatch): Promise<SlaPolicy> {
  const priority = await loadPriority(ctx, priorityId);
  const current = await scoped<PolicyRow>(ctx, 'sla_policies').where({ priority_id: priorityId }).first();
  const before = policyOut(priority, current);
  const next = { ...before, ...input };
  await ctx.trx('sla_policies')
    .insert({
      tenant_id: ctx.tenantId, priority_id: priorityId, ...Object.fromEntries(POLICY_FIELDS.map((f) => [f, next[f]])),
      created_at: ctx.now, updated_at: ctx.now,
    })
    .onConflict(['tenant_id', 'priority_id']).merge([...POLICY_FIELDS, 'updated_at']);
  const after = policyOut(priority, await scoped<PolicyRow>(ctx, 'sla_policies').where({ priority_id: priorityId }).first());
  await recordAudit(ctx, {
    action: 'sla_policy.updated', resourceType: 'sla_policy', resourceId: priorityId,
    changes: diff(before as unknown as Record<string, unknown>, after as unknown as Record<string, unknown>, [...POLICY_FIELDS]),
  });
  return after;
}

function overrideOut(row: OverrideRow): SlaOverride {
  return {
    type_id: row.type_id, priority_id: row.priority_id, resolve_hours: row.resolve_hours, first_response_minutes: row.first_response_minutes,
    next_response_minutes: row.next_response_minutes, warn_percent: row.warn_percent, updated_at: toRfc3339(row.updated_at)!,
  };
}

async function loadTypeAndPriority(ctx: Ctx, typeId: string, priorityId: string): Promise<void> {
  if (!(await TicketType.findIn(ctx, typeId))) throw errors.notFound('ticket_type', typeId);
  await loadPriority(ctx, priorityId);
}

/** Upsert of an override: fields sent are set, null clears one (the policy's value applies again). */
export async function patchOverride(ctx: Ctx, typeId: string, priorityId: string, input: SlaOverridePatch): Promise<SlaOverride> {
  await loadTypeAndPriority(ctx, typeId, priorityId);
  const key = { type_id: typeId, priority_id: priorityId };
  const current = await scoped<OverrideRow>(ctx, 'sla_type_overrides').where(key).first();
  const empty = { resolve_hours: null, first_response_minutes: null, next_response_minutes: null, warn_percent: null };
  const next = { ...empty, ...(current ? Object.fromEntries(OVERRIDE_FIELDS.map((f) => [f, current[f]])) : {}), ...input };
  await ctx.trx('sla_type_overrides')
    .insert({ tenant_id: ctx.tenantId, ...key, ...next, created_at: ctx.now, updated_at: ctx.now })
    .onConflict(['tenant_id', 'type_id', 'priority_id']).merge([...OVERRIDE_FIELDS, 'updated_at']);
  const after = (await scoped<OverrideRow>(ctx, 'sla_type_overrides').where(key).first())!;
  await recordAudit(ctx, {
    action: 'sla_override.updated', resourceType: 'sla_override', resourceId: typeId,
    changes: { priority_id: priorityId, ...diff((current ?? empty) as unknown as Record<string, unknown>, after as unknown as Record<string, unknown>, [...OVERRIDE_FIELDS]) },
  });
  return overrideOut(after);
}

export async function deleteOverride(ctx: Ctx, typeId: string, priorityId: string): Promise<void> {
  await loadTypeAndPriority(ctx, typeId, priorityId);
  const deleted = await scoped(ctx, 'sla_type_overrides').where({ type_id: typeId, priority_id: priorityId }).delete();
  if (deleted === 0) throw errors.notFound('sla_override');
  await recordAudit(ctx, { action: 'sla_override.deleted', resourceType: 'sla_override', resourceId: typeId, changes: { priority_id: priorityId } });
}

/**
 * The effective policy of (priority, type): the priority's policy with the type's override
 * replacing the fields it sets (`resolve_hours` × 60 replaces the resolution minutes), keeping the
 * policy's clock (CONTRACT §11 "Policy").
 */
export async function effectivePolicy(ctx: Ctx, priorityId: string, typeId: string | null): Promise<EffectivePolicy> {
  return cachedConfig(ctx, `sla:policy:${priorityId}:${typeId ?? ''}`, () => readEffectivePolicy(ctx, priorityId, typeId));
}

async function readEffectivePolicy(ctx: Ctx, priorityId: string, typeId: string | null): Promise<EffectivePolicy> {
  const priority = await loadPriority(ctx, priorityId);
  const row = await scoped<PolicyRow>(ctx, 'sla_policies').where({ priority_id: priorityId }).first();
  const p = policyOut(priority, row);
  const policy: EffectivePolicy = {
    first_response_minutes: p.first_response_time_minutes, next_response_minutes: p.next_response_time_minutes,
    resolution_minutes: p.resolution_time_minutes, respect_business_hours: p.respect_business_hours, warn_percent: p.warn_percent,
  };
  if (!typeId) return policy;
  const o = await scoped<OverrideRow>(ctx, 'sla_type_overrides').where({ type_id: typeId, priority_id: priorityId }).first();
  if (!o) return policy;
  return {
    ...policy,
    ...(o.first_response_minutes !== null ? { first_response_minutes: o.first_response_minutes } : {}),
    ...(o.next_response_minutes !== null ? { next_response_minutes: o.next_response_minutes } : {}),
    ...(o.resolve_hours !== null ? { resolution_minutes: o.resolve_hours * 60 } : {}),
    ...(o.warn_percent !== null ? { warn_percent: o.warn_percent } : {}),
  };
}
