import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { scoped } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';
import { findFlow } from '../bots/service.js';
import type { Widget, WidgetCreate } from './schemas.js';

/** Web chat widgets (CONTRACT §16): where a conversation may start from, with which bot. */
export interface WidgetRow {
  tenant_id: string; id: string; name: string; allowed_origins: string[]; greeting: string; bot_flow_id: string | null;
  offline_message: string; created_at: Date; updated_at: Date;
}

/** The snippet a site pastes into its pages: the widget script, served by the daemon, told its widget. */
export function embedSnippet(siteUrl: string, widgetId: string): string {
  return `<script src="${siteUrl}/webchat/widget.js" data-widget-id="${widgetId}" async></script>`;
}

export function widgetOut(ctx: Ctx, row: WidgetRow): Widget {
  return {
    id: row.id, name: row.name, allowed_origins: row.allowed_origins, greeting: row.greeting, bot_flow_id: row.bot_flow_id,
    offline_message: row.offline_message, embed_snippet: embedSnippet(ctx.deps.config.siteUrl, row.id),
    created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)!,
  };
}

/** Origins compare as browsers send them: scheme and host lower-case, no trailing slash. */
export function normaliseOrigin(origin: string): string {
  return origin.trim().replace(/\/+$/, '').toLowerCase();
}

export async function createWidget(ctx: Ctx, input: WidgetCreate): Promise<Widget> {
  if (input.bot_flow_id && !(await findFlow(ctx, input.bot_flow_id))) throw errors.invalid('bot_flow_id', 'does not exist');
  const origins = [...new Set(input.allowed_origins.map(normaliseOrigin))];
  const [row] = await ctx.trx('webchat_widgets').insert({
    tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), name: input.name.trim(), allowed_origins: JSON.stringify(origins),
    greeting: input.greeting ?? '', bot_flow_id: input.bot_flow_id ?? null, offline_message: input.offline_message ?? '',
    created_at: ctx.now, updated_at: ctx.now,
  }).returning('*') as WidgetRow[];
  await recordAudit(ctx, { action: 'webchat_widget.created', resourceType: 'webchat_widget', resourceId: row!.id, changes: { name: row!.name, allowed_origins: origins } });
  return widgetOut(ctx, row!);
}

export async function getWidget(ctx: Ctx, id: string): Promise<Widget> {
  const row = await scoped<WidgetRow>(ctx, 'webchat_widgets').where('id', id).first();
  if (!row) throw errors.notFound('webchat widget', id);
  return widgetOut(ctx, row);
}

/** A widget by id alone, for the public visitor API (which learns its tenant from the widget). */
export async function widgetById(ctx: Ctx, id: string): Promise<WidgetRow | undefined> {
  return ctx.trx<WidgetRow>('webchat_widgets').where('id', id).comment('cross-tenant: the visitor API resolves the tenant from the widget').first();
}

export function originAllowed(widget: WidgetRow, origin: string | undefined): boolean {
  if (!origin) return false;
  return widget.allowed_origins.includes(normaliseOrigin(origin));
}
