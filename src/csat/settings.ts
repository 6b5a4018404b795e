import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { diff, recordAudit } from '../audit/service.js';
import { scoped, insertScoped } from '../db/tenant-scope.js';
import type { CsatSettings, CsatSettingsPatch } from './schemas.js';

/** GET/PATCH /csat/settings (CONTRACT §14). A tenant without a row has the defaults: CSAT off. */
export const DEFAULT_QUESTION = 'How would you rate the support you received?';
export const CSAT_DEFAULTS: CsatSettings = { enabled: false, trigger: 'resolved', question: DEFAULT_QUESTION, comment_enabled: true, reasons: [] };

const FIELDS = ['enabled', 'trigger', 'question', 'comment_enabled', 'reasons'] as const;

export async function getCsatSettings(ctx: Ctx, options: { forUpdate?: boolean } = {}): Promise<CsatSettings> {
  const query = scoped(ctx, 'csat_settings').first();
  const row = options.forUpdate ? await query.forUpdate() : await query;
  if (!row) return { ...CSAT_DEFAULTS };
  return { enabled: row.enabled, trigger: row.trigger, question: row.question, comment_enabled: row.comment_enabled, reasons: row.reasons ?? [] };
}

function problemsOf(patch: CsatSettingsPatch): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (patch.question !== undefined && !patch.question.trim()) problems.push({ field: 'question', message: 'must not be blank' });
  const seen = new Set<string>();
  (patch.reasons ?? []).forEach((reason, i) => {
    const key = reason.trim().toLowerCase();
    if (!key) problems.push({ field: `reasons.${i}`, message: 'must not be blank' });
    else if (seen.has(key)) problems.push({ field: `reasons.${i}`, message: 'is listed twice' });
    seen.add(key);
  });
  return problems;
}

export async function updateCsatSettings(ctx: Ctx, patch: CsatSettingsPatch): Promise<CsatSettings> {
  const problems = problemsOf(patch);
  if (problems.length) throw errors.validation(problems);
  const before = await getCsatSettings(ctx, { forUpdate: true });
  const after: CsatSettings = {
    ...before,
    ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
    ...(patch.question !== undefined ? { question: patch.question.trim() } : {}),
    ...(patch.reasons !== undefined ? { reasons: patch.reasons.map((r) => r.trim()) } : {}),
  };
  const changes = diff(before as unknown as Record<string, unknown>, after as unknown as Record<string, unknown>, [...FIELDS]);
  if (!Object.keys(changes).length) return before;
  const row = { ...after, updated_at: ctx.now };
  const updated = await scoped(ctx, 'csat_settings').update(row);
  if (!updated) await insertScoped(ctx, 'csat_settings', row);
  await recordAudit(ctx, { action: 'csat_settings.updated', resourceType: 'csat_settings', resourceId: null, changes });
  return after;
}
