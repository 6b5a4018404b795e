import type { Ctx } from '../core/context.js';
import type { FieldProblem } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import { SkillRecord, TeamRecord } from '../directory/models.js';
import { Priority, Status } from '../vocab/models.js';
import type { ActionItem } from './models.js';
import { placeholderProblem } from './placeholders.js';

/**
 * Validation of macro and routing actions `[{type, value}]` (SPEC "Macro action item shape",
 * "Routing action item shape"). The type is checked by the route's schema; the value here, per
 * type, naming each problem `actions.<i>.value`. Records are named by id or, for readability in
 * rules, by key (status, priority) or name (team, skill); the stored action keeps what was sent
 * and is resolved again when it runs (`resolve*` below), so a renamed key is noticed there.
 */
const text = (v: unknown, max: number): v is string => typeof v === 'string' && v.trim().length > 0 && v.length <= max;

export async function resolveStatus(ctx: Ctx, v: string): Promise<Status | undefined> {
  return Status.scoped(ctx).where((w) => (isUuid(v) ? w.where('statuses.id', v) : w.where('statuses.key', v))).first();
}
export async function resolvePriority(ctx: Ctx, v: string): Promise<Priority | undefined> {
  return Priority.scoped(ctx).where((w) => (isUuid(v) ? w.where('priorities.id', v) : w.where('priorities.key', v))).first();
}
export async function resolveTeam(ctx: Ctx, v: string): Promise<TeamRecord | undefined> {
  return TeamRecord.scoped(ctx).where((w) => (isUuid(v) ? w.where('teams.id', v) : w.whereRaw('lower(teams.name) = lower(?)', [v]))).first();
}
export async function resolveSkill(ctx: Ctx, v: string): Promise<SkillRecord | undefined> {
  return SkillRecord.scoped(ctx).where((w) => (isUuid(v) ? w.where('skills.id', v) : w.whereRaw('lower(skills.name) = lower(?)', [v]))).first();
}

/** Problems of a list of actions; empty when every value fits its type. */
export async function actionProblems(ctx: Ctx, actions: readonly ActionItem[]): Promise<FieldProblem[]> {
  const problems: FieldProblem[] = [];
  for (const [i, action] of actions.entries()) {
    const bad = (message: string) => problems.push({ field: `actions.${i}.value`, message });
    const v = action.value;
    switch (action.type) {
      case 'set_status':
        if (!text(v, 100)) bad('must be a status key or id');
        else if (!(await resolveStatus(ctx, v))) bad(`${JSON.stringify(v)} is not a status of this tenant`);
        break;
      case 'set_priority':
        if (!text(v, 100)) bad('must be a priority key or id');
        else if (!(await resolvePriority(ctx, v))) bad(`${JSON.stringify(v)} is not a priority of this tenant`);
        break;
      case 'set_team':
        if (!text(v, 200)) bad('must be a team id or name');
        else if (!(await resolveTeam(ctx, v))) bad(`${JSON.stringify(v)} is not a team of this tenant`);
        break;
      case 'require_skill':
        if (!text(v, 200)) bad('must be a skill id or name');
        else if (!(await resolveSkill(ctx, v))) bad(`${JSON.stringify(v)} is not a skill of this tenant`);
        break;
      case 'add_tag':
        if (!text(v, 100)) bad('must be a tag name (at most 100 characters)');
        break;
      case 'post_reply': {
        if (!text(v, 20_000)) { bad('must be the reply text (at most 20000 characters)'); break; }
        const problem = placeholderProblem(v);
        if (problem) bad(problem);
        break;
      }
      default:
        problems.push({ field: `actions.${i}.type`, message: 'is not an action of this kind of record' });
    }
  }
  return problems;
}
