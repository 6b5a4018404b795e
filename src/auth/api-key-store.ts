import type { Ctx } from '../core/context.js';
import { ApiKeyRecord } from './models.js';
import { newApiKey } from './tokens.js';

/**
 * Issuing an API key: stores the hash, prefix and last four characters; the full key is returned
 * once, to show to its owner. Shared by POST /api-keys and `helpdesk tenant create`.
 */
export type ApiKeyRow = ApiKeyRecord;

export async function issueApiKey(
  ctx: Ctx,
  input: { userId: string; name: string; scopes: string[]; expiresAt: Date | null },
): Promise<{ row: ApiKeyRow; key: string }> {
  const { key, prefix, last4, hash } = newApiKey();
  const row = await ApiKeyRecord.insertIn(ctx, {
    user_id: input.userId,
    name: input.name,
    scopes: input.scopes,
    prefix,
    last4,
    token_hash: hash,
    expires_at: input.expiresAt,
    created_at: ctx.now,
  });
  return { row, key };
}
