import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { isUniqueViolation } from '../db/tenant-scope.js';
import { diff, recordAudit } from '../audit/service.js';
import { SkillRecord, UserSkillRecord } from './models.js';
import { loadUser } from './users.js';
import type { Skill, SkillCreate, SkillUpdate } from './schemas.js';

/** Skills (names unique per tenant) and the staff users who have them; routing rules require them. */
export function skillOut(row: SkillRecord): Skill {
  return { id: row.id, name: row.name, description: row.description, created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)! };
}

async function loadSkill(ctx: Ctx, id: string): Promise<SkillRecord> {
  const row = await SkillRecord.findIn(ctx, id);
  if (!row) throw errors.notFound('skill', id);
  return row;
}

async function saveName<T>(name: string | undefined, write: () => PromiseLike<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'skills_name')) throw errors.alreadyExists('skill', 'name', name ?? '');
    throw error;
  }
}

export async function listSkills(ctx: Ctx, query: PageInput): Promise<Page<Skill>> {
  return paginatePage<SkillRecord, Skill>(query, SkillRecord.scoped(ctx).orderByRaw('lower(skills.name)').orderBy('skills.id'), skillOut);
}

export async function getSkill(ctx: Ctx, id: string): Promise<Skill> {
  return skillOut(await loadSkill(ctx, id));
}

export async function createSkill(ctx: Ctx, input: SkillCreate): Promise<Skill> {
  const name = input.name.trim();
  const row = await saveName(name, () => SkillRecord.insertIn(ctx, { name, description: input.description ?? null, created_at: ctx.now, updated_at: ctx.now }));
  await recordAudit(ctx, { action: 'skill.created', resourceType: 'skill', resourceId: row.id, changes: { name } });
  return skillOut(row);
}

export async function updateSkill(ctx: Ctx, id: string, input: SkillUpdate): Promise<Skill> {
  const before = await loadSkill(ctx, id);
  const columns: Record<string, unknown> = {};
  if (input.name !== undefined) columns.name = input.name.trim();
  if (input.description !== undefined) columns.description = input.description;
  const changes = diff(before as unknown as Record<string, unknown>, { ...before, ...columns }, ['name', 'description']);
  if (!Object.keys(changes).length) return skillOut(before);
  const [after] = await saveName(columns.name as string | undefined, () =>
    SkillRecord.scoped(ctx).where('skills.id', id).patch({ ...columns, updated_at: ctx.now } as Partial<SkillRecord>).returning('*'));
  await recordAudit(ctx, { action: 'skill.updated', resourceType: 'skill', resourceId: id, changes });
  return skillOut(after!);
}

export async function deleteSkill(ctx: Ctx, id: string): Promise<void> {
  const skill = await loadSkill(ctx, id);
  await SkillRecord.scoped(ctx).where('skills.id', id).delete();
  await recordAudit(ctx, { action: 'skill.deleted', resourceType: 'skill', resourceId: id, changes: { name: skill.name } });
}

export async function listUserSkills(ctx: Ctx, userId: string, query: PageInput): Promise<Page<Skill>> {
  await loadUser(ctx, userId);
  const qb = SkillRecord.scoped(ctx)
    .whereExists(UserSkillRecord.scoped(ctx).whereColumn('user_skills.skill_id', 'skills.id').where('user_skills.user_id', userId))
    .orderByRaw('lower(skills.name)').orderBy('skills.id');
  return paginatePage<SkillRecord, Skill>(query, qb, skillOut);
}

/** Gives a staff user a skill; giving it again changes nothing. */
export async function assignSkill(ctx: Ctx, userId: string, skillId: string): Promise<Skill> {
  const user = await loadUser(ctx, userId);
  const skill = await loadSkill(ctx, skillId);
  if (user.role === 'customer') throw errors.conflict('Skills belong to agents and admins; this user is a customer');
  const held = await UserSkillRecord.scoped(ctx).where({ 'user_skills.user_id': userId, 'user_skills.skill_id': skillId }).first();
  if (held) return skillOut(skill);
  await UserSkillRecord.insertIn(ctx, { user_id: userId, skill_id: skillId, created_at: ctx.now });
  await recordAudit(ctx, { action: 'user.skill_assigned', resourceType: 'user', resourceId: userId, changes: { skill_id: skillId, skill: skill.name } });
  return skillOut(skill);
}

export async function removeSkill(ctx: Ctx, userId: string, skillId: string): Promise<void> {
  await loadUser(ctx, userId);
  const skill = await loadSkill(ctx, skillId);
  const removed = await UserSkillRecord.scoped(ctx).where({ 'user_skills.user_id': userId, 'user_skills.skill_id': skillId }).delete();
  if (!removed) throw errors.notFound('user skill', skillId);
  await recordAudit(ctx, { action: 'user.skill_removed', resourceType: 'user', resourceId: userId, changes: { skill_id: skillId, skill: skill.name } });
}
