import { createHash } from 'node:crypto';
import { SYSTEM_ACTOR, type Actor, type Ctx, type Deps } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { hmacBase64url, safeEqual } from '../core/crypto.js';
import { isUuid, uuidv7 } from '../core/ids.js';
import { paginatePage, type Page } from '../core/pagination.js';
import { inTransaction } from '../db/transaction.js';
import { scoped } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';
import { createTicket } from '../tickets/create.js';
import { escapeHtml } from '../csat/html.js';
import { renderFormPage } from './page.js';
import { brandingFor, hasBranding } from '../branding/service.js';
import type { WebformCreate, WebformListQuery, WebformOut, WebformSubmission, WebformSubmitted } from './schemas.js';

/**
 * Web forms (CONTRACT §17): an administrator defines a form (exactly one `email` field names the
 * requester); `{site_url}/forms/{id}` serves it as HTML; a submission to
 * `POST /api/v1/webforms/{id}/submissions` (public: the form id decides the tenant) must carry the
 * page's `form_token` (an HMAC of tenant, form and issue time, valid 24 hours), leave the honeypot
 * `homepage` empty, and stay under the rate limit (per form and client address), and creates a
 * ticket of channel `webform` from the email field's requester, the other fields in the body.
 */
export const TOKEN_TTL_MS = 24 * 3600 * 1000;
export const RATE_LIMIT = 5;
export const RATE_WINDOW_MS = 10 * 60_000;
export const HONEYPOT = 'homepage';
const RESERVED = new Set([HONEYPOT, 'form_token']);

interface Field { name: string; label: string; type: 'text' | 'email' | 'textarea'; required: boolean }
interface FormRow { tenant_id: string; id: string; title: string; fields: Field[]; created_at: Date; updated_at: Date }

const WEBFORM_ACTOR: Actor = { ...SYSTEM_ACTOR, name: 'Web form' };

export const publicUrlOf = (deps: Pick<Deps, 'config'>, id: string) => `${deps.config.siteUrl}/forms/${id}`;

function out(deps: Pick<Deps, 'config'>, row: FormRow): WebformOut {
  const url = publicUrlOf(deps, row.id);
  return {
    id: row.id, title: row.title, fields: row.fields, public_url: url,
    embed_snippet: `<iframe src="${escapeHtml(url)}" title="${escapeHtml(row.title)}" style="width:100%;min-height:560px;border:0" loading="lazy"></iframe>`,
    created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)!,
  };
}

const labelOf = (name: string) => name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

export async function createWebform(ctx: Ctx, input: WebformCreate): Promise<WebformOut> {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  input.fields.forEach((f, i) => {
    if (RESERVED.has(f.name)) problems.push({ field: `fields[${i}].name`, message: `${f.name} is reserved` });
    if (seen.has(f.name)) problems.push({ field: `fields[${i}].name`, message: 'is used twice' });
    seen.add(f.name);
  });
  const emails = input.fields.filter((f) => f.type === 'email').length;
  if (emails !== 1) problems.push({ field: 'fields', message: `must hold exactly one field of type email (it has ${emails})` });
  if (problems.length) throw errors.validation(problems);
  const fields: Field[] = input.fields.map((f) => ({ name: f.name, label: f.label?.trim() || labelOf(f.name), type: f.type, required: f.type === 'email' ? true : f.required ?? false }));
  const [row] = await ctx.trx('webforms').insert({
    tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), title: input.title.trim(), fields: JSON.stringify(fields), created_at: ctx.now, updated_at: ctx.now,
  }).returning('*') as FormRow[];
  await recordAudit(ctx, { action: 'webform.created', resourceType: 'webform', resourceId: row!.id, changes: { title: row!.title, fields: fields.map((f) => f.name) } });
  return out(ctx.deps, row!);
}

export async function listWebforms(ctx: Ctx, query: WebformListQuery): Promise<Page<WebformOut>> {
  return paginatePage<FormRow, WebformOut>(query, scoped(ctx, 'webforms').orderBy('created_at').orderBy('id'), (row) => out(ctx.deps, row));
}

export async function getWebform(ctx: Ctx, id: string): Promise<WebformOut> {
  const row = await scoped(ctx, 'webforms').where('id', id).first() as FormRow | undefined;
  if (!row) throw errors.notFound('web form', id);
  return out(ctx.deps, row);
}

export async function deleteWebform(ctx: Ctx, id: string): Promise<void> {
  const deleted = await scoped(ctx, 'webforms').where('id', id).delete();
  if (!deleted) throw errors.notFound('web form', id);
  await recordAudit(ctx, { action: 'webform.deleted', resourceType: 'webform', resourceId: id });
}

/** The public side finds a form by its id alone (ids are unique across tenants). */
async function publicForm(deps: Deps, id: string): Promise<FormRow> {
  const row = isUuid(id) ? await deps.db('webforms').where('id', id).comment('cross-tenant: a public form is found by its id, which decides the tenant').first() as FormRow | undefined : undefined;
  if (!row) throw errors.notFound('web form', id);
  return row;
}

function tokenFor(deps: Deps, form: FormRow, issuedAt: number): string {
  return `${issuedAt}.${hmacBase64url(deps.box.derive('helpdesk:webform-token'), `${form.tenant_id}.${form.id}.${issuedAt}`)}`;
}

function tokenValid(deps: Deps, form: FormRow, token: string | undefined, now: Date): boolean {
  const issuedAt = Number((token ?? '').split('.')[0]);
  if (!token || !Number.isInteger(issuedAt) || issuedAt > now.getTime() + 60_000 || now.getTime() - issuedAt > TOKEN_TTL_MS) return false;
  return safeEqual(token, tokenFor(deps, form, issuedAt));
}

/** A fresh form token (what the page embeds); `GET /webforms/{id}/token` hands it to forms built elsewhere. */
export async function issueFormToken(deps: Deps, id: string, now: Date): Promise<{ form_token: string }> {
  return { form_token: tokenFor(deps, await publicForm(deps, id), now.getTime()) };
}

export async function formPage(deps: Deps, id: string, now: Date, notice: { kind: 'thanks' | 'invalid'; text: string } | null = null): Promise<string> {
  const form = await publicForm(deps, id);
  // The tenant's branding (CONTRACT §19) once it has set any; an unbranded tenant's page is unchanged.
  const brand = await hasBranding({ trx: deps.db, tenantId: form.tenant_id }) ? await brandingFor(deps.db, form.tenant_id) : undefined;
  return renderFormPage({
    title: form.title, fields: form.fields, action: `/api/v1/webforms/${form.id}/submissions`, formToken: tokenFor(deps, form, now.getTime()), notice,
    ...(brand ? { brand } : {}),
  });
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export async function submitWebform(deps: Deps, id: string, body: WebformSubmission, client: { ip: string | null; now: Date; requestId: string | null }): Promise<WebformSubmitted> {
  const form = await publicForm(deps, id);
  if (!tokenValid(deps, form, body.form_token, client.now)) throw errors.forbidden('The form token is missing, expired or not this form\'s; reload the form');
  if ((body[HONEYPOT] ?? '').trim() !== '') throw errors.invalid(HONEYPOT, 'must be left empty');
  const problems: FieldProblem[] = [];
  const known = new Set(form.fields.map((f) => f.name));
  for (const key of Object.keys(body)) if (!known.has(key) && !RESERVED.has(key)) problems.push({ field: key, message: 'is not a field of this form' });
  for (const f of form.fields) {
    const value = (body[f.name] ?? '').trim();
    if (f.required && !value) problems.push({ field: f.name, message: 'is required' });
    else if (value && f.type === 'email' && (!EMAIL.test(value) || value.length > 254)) problems.push({ field: f.name, message: 'must be an email address' });
    else if (value && f.type === 'text' && value.length > 500) problems.push({ field: f.name, message: 'must be at most 500 characters' });
  }
  if (problems.length) throw errors.validation(problems);
  const ipHash = createHash('sha256').update(`${form.tenant_id}:${client.ip ?? 'unknown'}`).digest('hex');
  return inTransaction(deps, { tenantId: form.tenant_id, actor: WEBFORM_ACTOR, now: client.now, requestId: client.requestId, ip: client.ip }, async (ctx) => {
    // Submissions from one address to one form are serialised, so the count below is exact.
    await ctx.trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`webform:${form.id}:${ipHash}`]);
    const since = new Date(client.now.getTime() - RATE_WINDOW_MS);
    const recent = await scoped(ctx, 'webform_submissions').where({ form_id: form.id, ip_hash: ipHash }).where('created_at', '>', since).orderBy('created_at') as Array<{ created_at: Date }>;
    if (recent.length >= RATE_LIMIT) {
      const retry = Math.max(1, Math.ceil((recent[0]!.created_at.getTime() + RATE_WINDOW_MS - client.now.getTime()) / 1000));
      throw errors.rateLimited(retry, 'Too many submissions of this form from your address; try again later');
    }
    const emailField = form.fields.find((f) => f.type === 'email')!;
    const email = body[emailField.name]!.trim();
    const nameField = form.fields.find((f) => f.type === 'text' && /(^|_)name$/.test(f.name));
    const others = form.fields.filter((f) => f !== emailField && (body[f.name] ?? '').trim());
    const firstText = others.find((f) => f.type === 'text' && f !== nameField);
    const subject = `${form.title}${firstText ? `: ${body[firstText.name]!.trim()}` : ''}`.slice(0, 200);
    const text = others.map((f) => `${f.label}:\n${body[f.name]!.trim()}`).join('\n\n') || `(${form.title}: no other fields filled in)`;
    const ticket = await createTicket(ctx, {
      subject, body: text, channel: 'webform',
      requester: { email, ...(nameField && body[nameField.name]?.trim() ? { name: body[nameField.name]!.trim().slice(0, 200) } : {}) },
    });
    await ctx.trx('webform_submissions').insert({ tenant_id: ctx.tenantId, id: uuidv7(client.now.getTime()), form_id: form.id, ip_hash: ipHash, ticket_id: ticket.id, created_at: client.now });
    return { ticket_id: ticket.id, ticket_number: ticket.ticket_number };
  });
}
