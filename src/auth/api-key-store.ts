import type { Ctx } from '../core/context.js';
import { uuidv7 } from '../core/ids.js';
import { insertScoped } from '../db/tenant-scope.js';
import { newApiKey } from './tokens.js';

/**
 * Issuing an API key: stores the hash, prefix and last four characters; the full key is returned
 * once, to show to its owner. Shared by POST /api-keys and `helpdesk tenant create`.
 */
export interface ApiKeyRow {
  tenant_id: string;
  id: string;
  user_id: string;
  name: string;
  scopes: string[];
  prefix: string;
  last4: string;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

export async function issueApiKey(
  ctx: Ctx,
  input: { userId: string; name: string; scopes: string[]; expiresAt: Date | null },
): Promise<{ row: ApiKeyRow; key: string }> {
  const { key, prefix, last4, hash } = newApiKey();
  const [row] = await insertScoped<ApiKeyRow>(ctx, 'api_keys', {
    id: uuidv7(ctx.now.getTime()),
    user_id: input.userId,
    name: input.name,
    scopes: input.scopes,
    prefix,
    last4,
    token_hash: hash,
    expires_at: input.expiresAt,
    created_at: ctx.now,
  });
  return { row: row!, key };
}
