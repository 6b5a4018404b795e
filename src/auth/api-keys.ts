import { Type, type Static } from '@sinclair/typebox';
import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { parseRfc3339, toRfc3339 } from '../core/clock.js';
import { pageParams, paginatePage, type Page } from '../core/pagination.js';
import { NonBlank, Nullable, Timestamp } from '../core/schema-types.js';
import { ApiKeyRecord } from './models.js';
import { recordAudit } from '../audit/service.js';
import { issueApiKey, type ApiKeyRow } from './api-key-store.js';
import { grants, isKnownScope } from './scopes.js';
import { forgetCredentialsOnCommit } from './credential-changes.js';

/**
 * Programmatic API keys (CONTRACT §3): issued by a user for themselves with at most the scopes
 * they hold, shown in full once, listed by prefix and last four characters, revoked by DELETE.
 */
export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  prefix: Type.String(),
  last4: Type.String(),
  expires_at: Nullable(Type.String()),
  last_used_at: Nullable(Type.String()),
  revoked_at: Nullable(Type.String()),
  created_at: Type.String(),
  user_id: Type.String(),
}, { $id: 'ApiKey' });
export type ApiKey = Static<typeof ApiKey>;

export const CreatedApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  expires_at: Nullable(Type.String()),
  prefix: Type.String(),
  last4: Type.String(),
  created_at: Type.String(),
  key: Type.String({ description: 'The full key; shown only in this answer' }),
}, { $id: 'CreatedApiKey' });
export type CreatedApiKey = Static<typeof CreatedApiKey>;

export const ApiKeyCreate = Type.Object(
  {
    name: NonBlank({ maxLength: 100 }),
    scopes: Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 100 }),
    expires_at: Type.Optional(Nullable(Timestamp())),
  },
  { $id: 'ApiKeyCreate', additionalProperties: false },
);
export type ApiKeyCreate = Static<typeof ApiKeyCreate>;

export const ApiKeyListQuery = Type.Object({ ...pageParams, include_revoked: Type.Optional(Type.Boolean({ default: false })) });
export type ApiKeyListQuery = Static<typeof ApiKeyListQuery>;

export function apiKeyOut(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    prefix: row.prefix,
    last4: row.last4,
    expires_at: toRfc3339(row.expires_at),
    last_used_at: toRfc3339(row.last_used_at),
    revoked_at: toRfc3339(row.revoked_at),
    created_at: toRfc3339(row.created_at)!,
    user_id: row.user_id,
  };
}

export async function listApiKeys(ctx: Ctx, query: ApiKeyListQuery): Promise<Page<ApiKey>> {
  const qb = ApiKeyRecord.scoped(ctx)
    .select('tenant_id', 'id', 'user_id', 'name', 'scopes', 'prefix', 'last4', 'expires_at', 'last_used_at', 'revoked_at', 'created_at');
  if (!query.include_revoked) qb.whereNull('revoked_at');
  qb.orderBy('created_at', 'desc').orderBy('id', 'desc');
  return paginatePage<ApiKeyRow, ApiKey>(query, qb, apiKeyOut);
}

export async function createApiKey(ctx: Ctx, input: ApiKeyCreate): Promise<CreatedApiKey> {
  const problems: FieldProblem[] = [];
  if (!input.name.trim()) problems.push({ field: 'name', message: 'must not be blank' });
  input.scopes.forEach((scope, i) => {
    if (!isKnownScope(scope)) problems.push({ field: `scopes.${i}`, message: `is not a known scope: ${scope}` });
  });
  const expiresAt = input.expires_at ? parseRfc3339(input.expires_at) : null;
  if (input.expires_at && !expiresAt) problems.push({ field: 'expires_at', message: 'must be a valid RFC 3339 timestamp' });
  if (expiresAt && expiresAt <= ctx.now) problems.push({ field: 'expires_at', message: 'must be in the future' });
  if (problems.length) throw errors.validation(problems);

  // A key acts for the user who issues it, so it can never hold more than that user holds.
  if (!ctx.actor.userId) throw errors.forbidden('API keys belong to a user; sign in as the user who will own the key');
  const scopes = [...new Set(input.scopes)];
  const missing = scopes.find((scope) => !grants(ctx.actor.scopes, scope));
  if (missing) throw errors.insufficientScope(missing);

  const { row, key } = await issueApiKey(ctx, { userId: ctx.actor.userId, name: input.name.trim(), scopes, expiresAt });
  await recordAudit(ctx, {
    action: 'api_key.created',
    resourceType: 'api_key',
    resourceId: row.id,
    changes: { name: row.name, scopes, prefix: row.prefix, expires_at: toRfc3339(expiresAt) },
  });
  const out = apiKeyOut(row);
  return { id: out.id, name: out.name, scopes: out.scopes, expires_at: out.expires_at, prefix: out.prefix, last4: out.last4, created_at: out.created_at, key };
}

/** Revokes a key; revoking a revoked key changes nothing (DELETE is idempotent). */
export async function revokeApiKey(ctx: Ctx, id: string): Promise<void> {
  const row = await ApiKeyRecord.findIn(ctx, id);
  if (!row) throw errors.notFound('API key', id);
  if (row.revoked_at) return;
  await ApiKeyRecord.scoped(ctx).where('id', id).patch({ revoked_at: ctx.now });
  // Refused on this daemon's very next request, not only once the NOTIFY arrives.
  forgetCredentialsOnCommit(ctx);
  await recordAudit(ctx, { action: 'api_key.revoked', resourceType: 'api_key', resourceId: id, changes: { name: row.name, prefix: row.prefix } });
}
