import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { isUniqueViolation } from '../db/tenant-scope.js';
import { diff, recordAudit } from '../audit/service.js';
import { compileConditions } from '../tickets/conditions.js';
import { ROUTING_TRIGGERS, RoutingRuleRecord } from './models.js';
import { actionProblems } from './actions.js';
import type { RoutingRule, RoutingRuleCreate, RoutingRuleUpdate } from './schemas.js';

/**
 * Routing rules (CONTRACT §4 `{name, conditions, actions, position, active}`, plus `triggers`):
 * conditions in the ticket list's language, actions `set_team`, `set_priority`, `require_skill`.
 * Both are validated on every write, naming the bad item (`conditions.2.value`, `actions.0.value`);
 * how they run is src/automation/routing.ts. Admin configuration: every change is audited.
 */
export function routingRuleOut(row: RoutingRuleRecord): RoutingRule {
  return {
    id: row.id, name: row.name, conditions: row.conditions, actions: row.actions, position: row.position, active: row.active,
    triggers: row.triggers, created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)!,
  };
}

async function loadRule(ctx: Ctx, id: string): Promise<RoutingRuleRecord> {
  const row = await RoutingRuleRecord.findIn(ctx, id);
  if (!row) throw errors.notFound('routing rule', id);
  return row;
}

async function saveName<T>(name: string | undefined, write: () => PromiseLike<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'routing_rules_name')) throw errors.alreadyExists('routing rule', 'name', name ?? '');
    throw error;
  }
}

/** Conditions and actions together, so one 422 names every problem of the body. */
async function check(ctx: Ctx, input: { conditions?: unknown; actions?: RoutingRuleCreate['actions'] }): Promise<void> {
  const problems = input.actions ? await actionProblems(ctx, input.actions) : [];
  if (input.conditions !== undefined) {
    try {
      await compileConditions(ctx, input.conditions);
    } catch (error) {
      if (!(error && typeof error === 'object' && 'details' in error && Array.isArray(error.details))) throw error;
      problems.unshift(...(error.details as typeof problems));
    }
  }
  if (problems.length) throw errors.validation(problems);
}

export async function listRoutingRules(ctx: Ctx, query: PageInput): Promise<Page<RoutingRule>> {
  return paginatePage<RoutingRuleRecord, RoutingRule>(query, RoutingRuleRecord.scoped(ctx).orderBy('routing_rules.position').orderBy('routing_rules.id'), routingRuleOut);
}

export async function getRoutingRule(ctx: Ctx, id: string): Promise<RoutingRule> {
  return routingRuleOut(await loadRule(ctx, id));
}

export async function createRoutingRule(ctx: Ctx, input: RoutingRuleCreate): Promise<RoutingRule> {
  await check(ctx, input);
  const name = input.name.trim();
  let position = input.position;
  if (position === undefined) {
    const last = await RoutingRuleRecord.scoped(ctx).orderBy('routing_rules.position', 'desc').first();
    position = last ? last.position + 1 : 0;
  }
  const row = await saveName(name, () => RoutingRuleRecord.insertIn(ctx, {
    name, conditions: input.conditions, actions: input.actions, position, active: input.active ?? true,
    triggers: [...new Set(input.triggers ?? ROUTING_TRIGGERS)], created_at: ctx.now, updated_at: ctx.now,
  }));
  await recordAudit(ctx, { action: 'routing_rule.created', resourceType: 'routing_rule', resourceId: row.id, changes: { ...routingRuleOut(row), id: undefined } });
  return routingRuleOut(row);
}

export async function updateRoutingRule(ctx: Ctx, id: string, input: RoutingRuleUpdate): Promise<RoutingRule> {
  const before = await loadRule(ctx, id);
  await check(ctx, input);
  const columns: Record<string, unknown> = {};
  for (const field of ['conditions', 'actions', 'position', 'active', 'triggers'] as const) {
    if (input[field] !== undefined) columns[field] = input[field];
  }
  if (input.triggers) columns.triggers = [...new Set(input.triggers)];
  if (input.name !== undefined) columns.name = input.name.trim();
  const fields = ['name', 'conditions', 'actions', 'position', 'active', 'triggers'];
  const changes = diff(before as unknown as Record<string, unknown>, { ...before, ...columns }, fields);
  if (!Object.keys(changes).length) return routingRuleOut(before);
  const [after] = await saveName(columns.name as string | undefined, () =>
    RoutingRuleRecord.scoped(ctx).where('routing_rules.id', id).patch({ ...columns, updated_at: ctx.now } as Partial<RoutingRuleRecord>).returning('*'));
  await recordAudit(ctx, { action: 'routing_rule.updated', resourceType: 'routing_rule', resourceId: id, changes });
  return routingRuleOut(after!);
}

export async function deleteRoutingRule(ctx: Ctx, id: string): Promise<void> {
  const rule = await loadRule(ctx, id);
  await RoutingRuleRecord.scoped(ctx).where('routing_rules.id', id).delete();
  await recordAudit(ctx, { action: 'routing_rule.deleted', resourceType: 'routing_rule', resourceId: id, changes: { name: rule.name } });
}
