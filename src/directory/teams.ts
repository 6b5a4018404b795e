import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { isUniqueViolation } from '../db/tenant-scope.js';
import { diff, recordAudit } from '../audit/service.js';
import { TeamMemberRecord, TeamRecord, UserRecord } from './models.js';
import type { Team, TeamCreate, TeamMember, TeamUpdate } from './schemas.js';

/**
 * Teams of staff users (CONTRACT §5 "Team members"): a name unique per tenant; members are agents
 * or admins, each with `is_lead` (leads receive the team's SLA warnings).
 */
export function teamOut(row: TeamRecord): Team {
  return { id: row.id, name: row.name, description: row.description, created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)! };
}

async function loadTeam(ctx: Ctx, id: string): Promise<TeamRecord> {
  const row = await TeamRecord.findIn(ctx, id);
  if (!row) throw errors.notFound('team', id);
  return row;
}

async function saveName<T>(name: string | undefined, write: () => PromiseLike<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'teams_name')) throw errors.alreadyExists('team', 'name', name ?? '');
    throw error;
  }
}

export async function listTeams(ctx: Ctx, query: PageInput): Promise<Page<Team>> {
  return paginatePage<TeamRecord, Team>(query, TeamRecord.scoped(ctx).orderByRaw('lower(teams.name)').orderBy('teams.id'), teamOut);
}

/** The caller's teams (an API key acts as its owner). */
export async function myTeams(ctx: Ctx, query: PageInput): Promise<Page<Team>> {
  const qb = TeamRecord.scoped(ctx)
    .whereExists(TeamMemberRecord.scoped(ctx).whereColumn('team_members.team_id', 'teams.id').where('team_members.user_id', ctx.actor.userId ?? '00000000-0000-0000-0000-000000000000'))
    .orderByRaw('lower(teams.name)').orderBy('teams.id');
  return paginatePage<TeamRecord, Team>(query, qb, teamOut);
}

export async function getTeam(ctx: Ctx, id: string): Promise<Team> {
  return teamOut(await loadTeam(ctx, id));
}

export async function createTeam(ctx: Ctx, input: TeamCreate): Promise<Team> {
  const name = input.name.trim();
  const row = await saveName(name, () => TeamRecord.insertIn(ctx, { name, description: input.description ?? null, created_at: ctx.now, updated_at: ctx.now }));
  await recordAudit(ctx, { action: 'team.created', resourceType: 'team', resourceId: row.id, changes: { name } });
  return teamOut(row);
}

export async function updateTeam(ctx: Ctx, id: string, input: TeamUpdate): Promise<Team> {
  const before = await loadTeam(ctx, id);
  const columns: Record<string, unknown> = {};
  if (input.name !== undefined) columns.name = input.name.trim();
  if (input.description !== undefined) columns.description = input.description;
  const changes = diff(before as unknown as Record<string, unknown>, { ...before, ...columns }, ['name', 'description']);
  if (!Object.keys(changes).length) return teamOut(before);
  const [after] = await saveName(columns.name as string | undefined, () =>
    TeamRecord.scoped(ctx).where('teams.id', id).patch({ ...columns, updated_at: ctx.now } as Partial<TeamRecord>).returning('*'));
  await recordAudit(ctx, { action: 'team.updated', resourceType: 'team', resourceId: id, changes });
  return teamOut(after!);
}

export async function deleteTeam(ctx: Ctx, id: string): Promise<void> {
  const team = await loadTeam(ctx, id);
  await TeamRecord.scoped(ctx).where('teams.id', id).delete();
  await recordAudit(ctx, { action: 'team.deleted', resourceType: 'team', resourceId: id, changes: { name: team.name } });
}

interface MemberRow {
  user_id: string;
  name: string;
  email: string;
  is_lead: boolean;
}

const memberOut = (row: MemberRow): TeamMember => ({ user_id: row.user_id, name: row.name, email: row.email, is_lead: row.is_lead });

/** Members joined to their users on the composite key, so the join cannot cross tenants. */
function membersQuery(ctx: Ctx, teamId: string) {
  return TeamMemberRecord.scoped(ctx)
    .join('users', (j) => j.on('users.tenant_id', 'team_members.tenant_id').andOn('users.id', 'team_members.user_id'))
    .where('team_members.team_id', teamId)
    .select('team_members.user_id', 'users.name', 'users.email', 'team_members.is_lead');
}

export async function listTeamMembers(ctx: Ctx, teamId: string, query: PageInput): Promise<Page<TeamMember>> {
  await loadTeam(ctx, teamId);
  const qb = membersQuery(ctx, teamId).orderBy('team_members.is_lead', 'desc').orderByRaw('lower(users.name)').orderBy('team_members.user_id');
  return paginatePage<MemberRow, TeamMember>(query, qb, memberOut);
}

async function loadMember(ctx: Ctx, teamId: string, userId: string): Promise<TeamMember> {
  const row = (await membersQuery(ctx, teamId).where('team_members.user_id', userId).first()) as unknown as MemberRow | undefined;
  if (!row) throw errors.notFound('team member', userId);
  return memberOut(row);
}

export async function addTeamMember(ctx: Ctx, teamId: string, input: { user_id: string; is_lead?: boolean }): Promise<TeamMember> {
  const team = await loadTeam(ctx, teamId);
  const user = await UserRecord.findIn(ctx, input.user_id);
  if (!user) throw errors.invalid('user_id', 'is not a user of this tenant');
  if (user.role === 'customer') throw errors.invalid('user_id', 'must be an agent or admin; customers cannot join teams');
  try {
    await TeamMemberRecord.insertIn(ctx, { team_id: teamId, user_id: user.id, is_lead: input.is_lead ?? false, created_at: ctx.now });
  } catch (error) {
    if (isUniqueViolation(error)) throw errors.alreadyExists('team member', 'user_id', user.id);
    throw error;
  }
  await recordAudit(ctx, { action: 'team.member_added', resourceType: 'team', resourceId: teamId, changes: { team: team.name, user_id: user.id, is_lead: input.is_lead ?? false } });
  return { user_id: user.id, name: user.name, email: user.email, is_lead: input.is_lead ?? false };
}

export async function updateTeamMember(ctx: Ctx, teamId: string, userId: string, input: { is_lead: boolean }): Promise<TeamMember> {
  await loadTeam(ctx, teamId);
  const before = await loadMember(ctx, teamId, userId);
  if (before.is_lead === input.is_lead) return before;
  await TeamMemberRecord.scoped(ctx).where({ 'team_members.team_id': teamId, 'team_members.user_id': userId }).patch({ is_lead: input.is_lead });
  await recordAudit(ctx, { action: 'team.member_updated', resourceType: 'team', resourceId: teamId, changes: { user_id: userId, is_lead: { from: before.is_lead, to: input.is_lead } } });
  return { ...before, is_lead: input.is_lead };
}

export async function removeTeamMember(ctx: Ctx, teamId: string, userId: string): Promise<void> {
  await loadTeam(ctx, teamId);
  await loadMember(ctx, teamId, userId);
  await TeamMemberRecord.scoped(ctx).where({ 'team_members.team_id': teamId, 'team_members.user_id': userId }).delete();
  await recordAudit(ctx, { action: 'team.member_removed', resourceType: 'team', resourceId: teamId, changes: { user_id: userId } });
}
