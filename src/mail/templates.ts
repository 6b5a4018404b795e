import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { recordAudit } from '../audit/service.js';
import { TemplateOverride } from './models.js';
import { unknownPlaceholders } from './render.js';
import { AUDIENCE, DEFAULT_LOCALE, IDENTIFIERS, SHIPPED, isIdentifier, type Identifier, type TemplateText } from './template-defaults.js';
import type { NotificationTemplate, TemplatePatch } from './schemas.js';
import { cachedConfig } from '../db/config-cache.js';

/**
 * Notification templates (CONTRACT §14): the shipped texts with the tenant's edits laid over them,
 * per identifier and locale. `en` (or no locale) is the default; other locales are translations.
 * Edits are checked for unknown placeholders (422 naming them) and audited; DELETE restores the
 * shipped texts of an identifier in every locale.
 */

async function overridesOf(ctx: Ctx, identifier?: string): Promise<TemplateOverride[]> {
  const qb = TemplateOverride.scoped(ctx);
  if (identifier) qb.where('identifier', identifier);
  return qb.orderBy('locale');
}

function templateOut(identifier: Identifier, overrides: TemplateOverride[]): NotificationTemplate {
  const texts: Record<string, TemplateText> = { ...SHIPPED[identifier] };
  for (const o of overrides) texts[o.locale] = { subject: o.subject, body_html: o.body_html };
  const { [DEFAULT_LOCALE]: base, ...translations } = texts;
  return {
    identifier,
    audience: AUDIENCE[identifier],
    subject: base!.subject,
    body_html: base!.body_html,
    translations,
    customized: overrides.length > 0,
  };
}

export async function listTemplates(ctx: Ctx): Promise<{ data: NotificationTemplate[] }> {
  const overrides = await overridesOf(ctx);
  return { data: IDENTIFIERS.map((id) => templateOut(id, overrides.filter((o) => o.identifier === id))) };
}

function known(identifier: string): Identifier {
  if (!isIdentifier(identifier)) throw errors.notFound('notification template', identifier);
  return identifier;
}

export async function updateTemplate(ctx: Ctx, identifier: string, input: TemplatePatch): Promise<NotificationTemplate> {
  const id = known(identifier);
  const locale = input.locale ?? DEFAULT_LOCALE;
  const problems: FieldProblem[] = [];
  for (const field of ['subject', 'body_html'] as const) {
    const text = input[field];
    if (text === undefined) continue;
    const unknown = unknownPlaceholders(text);
    if (unknown.length) problems.push({ field, message: `uses unknown placeholder${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `{{${n}}}`).join(', ')}` });
  }
  if (problems.length) throw errors.validation(problems);

  const existing = await TemplateOverride.scoped(ctx).where({ identifier: id, locale }).forUpdate().first();
  const current = existing ?? SHIPPED[id][locale] ?? SHIPPED[id][DEFAULT_LOCALE]!;
  const next = { subject: input.subject ?? current.subject, body_html: input.body_html ?? current.body_html };
  if (existing) {
    await TemplateOverride.scoped(ctx).where('id', existing.id).patch({ ...next, updated_at: ctx.now } as never);
  } else {
    await TemplateOverride.insertIn(ctx, { identifier: id, locale, ...next, created_at: ctx.now, updated_at: ctx.now });
  }
  await recordAudit(ctx, {
    action: 'notification_template.updated',
    resourceType: 'notification_template',
    resourceId: null,
    changes: {
      identifier: id,
      locale,
      ...(input.subject !== undefined && input.subject !== current.subject ? { subject: { from: current.subject, to: input.subject } } : {}),
      ...(input.body_html !== undefined && input.body_html !== current.body_html ? { body_html: { from: current.body_html, to: input.body_html } } : {}),
    },
  });
  return templateOut(id, await overridesOf(ctx, id));
}

export async function resetTemplate(ctx: Ctx, identifier: string): Promise<void> {
  const id = known(identifier);
  const removed = await TemplateOverride.scoped(ctx).where('identifier', id).delete().returning('locale') as unknown as { locale: string }[];
  if (removed.length) {
    await recordAudit(ctx, { action: 'notification_template.reset', resourceType: 'notification_template', changes: { identifier: id, locales: removed.map((r) => r.locale) } });
  }
}

/**
 * The text to send for a recipient's locale: the tenant's edit of that locale, else the shipped
 * translation, then the same for the language without region (`pt-BR` → `pt`), else the default.
 */
export async function templateFor(ctx: Ctx, identifier: Identifier, locale: string | null): Promise<TemplateText> {
  const wanted = [...new Set([locale, locale?.split('-')[0], DEFAULT_LOCALE].filter((l): l is string => !!l))];
  return cachedConfig(ctx, `mail:template:${identifier}:${wanted.join(',')}`, async () => {
    const overrides = await TemplateOverride.scoped(ctx).where('identifier', identifier).whereIn('locale', wanted);
    for (const l of wanted) {
      const o = overrides.find((row) => row.locale === l);
      if (o) return { subject: o.subject, body_html: o.body_html };
      if (SHIPPED[identifier][l]) return { ...SHIPPED[identifier][l]! };
    }
    return { ...SHIPPED[identifier][DEFAULT_LOCALE]! };
  });
}
