import type { Actor, Ctx } from '../core/context.js';
import { isAppError } from '../core/errors.js';
import { cachedConfig } from '../db/config-cache.js';
import { emitTicketRouted } from '../events/emit/ticket-routed.js';
import { applyTicketChanges, type TicketChangeSet } from '../tickets/changes.js';
import { compileConditions, matchesConditions } from '../tickets/conditions.js';
import type { TicketChange } from '../tickets/hooks.js';
import { Ticket } from '../tickets/models.js';
import type { SkillRecord, TeamRecord } from '../directory/models.js';
import type { Priority } from '../vocab/models.js';
import { RoutingRuleRecord, type RoutingTrigger } from './models.js';
import { resolvePriority, resolveSkill, resolveTeam } from './actions.js';
import { leastLoadedAgent } from './agents.js';

/**
 * The routing engine. Active rules whose `triggers` include the occasion run in (position, id)
 * order against the ticket as it stood before routing (a rule's action never makes another rule
 * match). Conflicts: the first matching rule that decides an attribute (team, priority, assignee)
 * wins it; later rules still decide the attributes nobody decided. Routing respects people:
 * on an update it leaves alone what that same update set by hand, `set_team` does not replace a
 * team given at creation, and `require_skill` only assigns an unassigned ticket.
 *
 * The decided changes go through the tickets' one change function (as the system actor
 * "Routing"), so each records its change event and the hooks (SLA) run; every assignment also
 * records `ticket.routed` (SPEC payload: the rule, the trigger, the team or the agent). A rule
 * whose stored conditions no longer compile (a custom field deleted since) is skipped and logged.
 */
export const ROUTING_ACTOR: Actor = {
  type: 'system', userId: null, name: 'Routing', role: null, apiKeyId: null, sessionId: null, scopes: ['admin'],
};

/** Transactions in which routing is applying its own changes: its nested hook call must not route again. */
const routing = new WeakSet<object>();

/** A rule as routing reads it: a frozen row shared through the configuration cache. */
type RuleRow = Pick<RoutingRuleRecord, 'id' | 'name' | 'conditions' | 'actions'>;
interface Decision<T> { value: T; rule: RuleRow }
interface Decisions { team?: Decision<TeamRecord>; priority?: Decision<Priority>; skill?: Decision<SkillRecord> }

/**
 * The active rules of a trigger in order, from the configuration cache when the write pinned its
 * version (routing_rules bumps it: migrations/20261128190100_routing_rules_config_version.ts).
 */
function activeRules(ctx: Ctx, trigger: RoutingTrigger): Promise<readonly RuleRow[]> {
  return cachedConfig(ctx, `routing:${trigger}`, async () => {
    const rows = await RoutingRuleRecord.scoped(ctx).where('routing_rules.active', true)
      .whereRaw('? = ANY(routing_rules.triggers)', [trigger]).orderBy('routing_rules.position').orderBy('routing_rules.id');
    return rows.map((r) => ({ id: r.id, name: r.name, conditions: r.conditions, actions: r.actions }));
  });
}

async function decide(ctx: Ctx, ticket: Ticket, trigger: RoutingTrigger, handSet: ReadonlySet<string>): Promise<Decisions> {
  const rules = await activeRules(ctx, trigger);
  const decided: Decisions = {};
  for (const rule of rules) {
    let compiled;
    try {
      compiled = await compileConditions(ctx, rule.conditions);
    } catch (error) {
      if (!isAppError(error)) throw error;
      ctx.deps.log.warn({ rule_id: rule.id, err: error.message }, 'routing rule skipped: its conditions no longer compile');
      continue;
    }
    if (!matchesConditions(ticket, compiled)) continue;
    for (const action of rule.actions) {
      const value = String(action.value);
      if (action.type === 'set_team' && !decided.team && !handSet.has('team_id')) {
        const team = await resolveTeam(ctx, value);
        if (team) decided.team = { value: team, rule };
      } else if (action.type === 'set_priority' && !decided.priority && !handSet.has('priority_id')) {
        const priority = await resolvePriority(ctx, value);
        if (priority) decided.priority = { value: priority, rule };
      } else if (action.type === 'require_skill' && !decided.skill && !ticket.assigned_agent_id && !handSet.has('assigned_agent_id')) {
        const skill = await resolveSkill(ctx, value);
        if (skill) decided.skill = { value: skill, rule };
      }
    }
  }
  return decided;
}

/** Routes one ticket (locked by the caller) on `trigger`; answers whether anything changed. */
export async function routeTicket(ctx: Ctx, ticket: Ticket, trigger: RoutingTrigger, handSet: ReadonlySet<string> = new Set()): Promise<boolean> {
  const decided = await decide(ctx, ticket, trigger, handSet);
  const changes: TicketChangeSet = {};
  if (decided.team && decided.team.value.id !== ticket.team_id) changes.team_id = decided.team.value.id;
  if (decided.priority && decided.priority.value.id !== ticket.priority_id) changes.priority_id = decided.priority.value.id;
  const agent = decided.skill ? await leastLoadedAgent(ctx, decided.skill.value.id, changes.team_id ?? ticket.team_id) : null;
  if (agent) changes.assigned_agent_id = agent.id;
  if (!Object.keys(changes).length) return false;

  const as: Ctx = { ...ctx, actor: ROUTING_ACTOR };
  routing.add(ctx.trx);
  try {
    await applyTicketChanges(as, ticket, changes);
  } finally {
    routing.delete(ctx.trx);
  }
  const routed = async (rule: RuleRow, target: { team_id: string; team_name: string } | { agent_id: string; agent_name: string }) => emitTicketRouted(as, {
    ticket_id: ticket.id, ticket_number: Number(ticket.ticket_number), trigger_event: trigger, rule_id: rule.id, rule_name: rule.name, ...target,
  });
  if (changes.team_id && decided.team) await routed(decided.team.rule, { team_id: decided.team.value.id, team_name: decided.team.value.name });
  if (agent && decided.skill) await routed(decided.skill.rule, { agent_id: agent.id, agent_name: agent.name });
  return true;
}

/**
 * The ticket hook (registered in src/wiring.ts): routes on creation and on every update that
 * routing did not make itself.
 */
export async function routingHook(ctx: Ctx, change: TicketChange): Promise<boolean> {
  if (routing.has(ctx.trx)) return false;
  if (change.before === null) {
    // What the creator chose stays: a team, an assignee. (A priority is a default as often as a choice.)
    const chosen = new Set<string>();
    if (change.after.team_id) chosen.add('team_id');
    return routeTicket(ctx, change.after, 'ticket_created', chosen);
  }
  const current = await Ticket.scoped(ctx).where('tickets.id', change.after.id).forUpdate().first();
  return current && !current.closed_at ? routeTicket(ctx, current, 'ticket_updated', change.changed) : false;
}
