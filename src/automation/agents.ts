import type { Ctx } from '../core/context.js';

/**
 * Who can take one more ticket needing a skill: the least-loaded available agent (issue 7).
 * - Available: an active admin or agent who has the skill and, when the ticket has a team, is a
 *   member of it. (Presence, when the live-chat console brings it, narrows this one function.)
 * - Load: tickets assigned to them whose status is not resolved or closed.
 * - Capacity: `max_concurrent_conversations`; below it they can take another; null is no limit.
 * Ties go to the agent with the lower id (time-ordered: the longer-standing account), so a
 * choice is deterministic. Routing of one tenant takes a transaction-level advisory lock first,
 * so two tickets created at once cannot both hand the last free slot to the same agent.
 */
export interface Candidate { id: string; name: string; load: number; max_concurrent_conversations: number | null }

export async function leastLoadedAgent(ctx: Ctx, skillId: string, teamId: string | null): Promise<Candidate | null> {
  await ctx.trx.raw("SELECT pg_advisory_xact_lock(hashtext('helpdesk-routing:' || ?::text))", [ctx.tenantId]);
  const { rows } = await ctx.trx.raw<{ rows: Candidate[] }>(`
    SELECT u.id, u.name, u.max_concurrent_conversations,
           (SELECT count(*)::int FROM tickets t
              JOIN statuses s ON s.tenant_id = t.tenant_id AND s.id = t.status_id
             WHERE t.tenant_id = u.tenant_id AND t.assigned_agent_id = u.id AND t.closed_at IS NULL
               AND s.category NOT IN ('resolved', 'closed')) AS load
      FROM users u
      JOIN user_skills us ON us.tenant_id = u.tenant_id AND us.user_id = u.id AND us.skill_id = ?
     WHERE u.tenant_id = ? AND u.active AND u.role IN ('admin', 'agent')
       AND (?::uuid IS NULL OR EXISTS (SELECT 1 FROM team_members m
              WHERE m.tenant_id = u.tenant_id AND m.team_id = ?::uuid AND m.user_id = u.id))
     ORDER BY load, u.id`, [skillId, ctx.tenantId, teamId, teamId]);
  return rows.find((c) => c.max_concurrent_conversations === null || c.load < c.max_concurrent_conversations) ?? null;
}
