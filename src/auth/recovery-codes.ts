import { randomBytes } from 'node:crypto';
import type { Ctx } from '../core/context.js';
import { sha256Hex } from '../core/crypto.js';
import { uuidv7 } from '../core/ids.js';
import { insertScoped } from '../db/tenant-scope.js';
import { RecoveryCodeRecord } from './models.js';

/**
 * Recovery codes: ten single-use codes shown once when 2FA is enabled, stored only as SHA-256
 * hashes. Shape `xxxxx-xxxxx` over Crockford's base32 alphabet (50 bits each; no I, L, O, U to
 * misread); matching ignores case, spaces and hyphens, so a code can never look like a TOTP code.
 */
export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function newRecoveryCode(): string {
  const chars = Array.from(randomBytes(10), (b) => ALPHABET[b & 31]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

export function normaliseRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[^0-9a-z]/g, '');
}

/** Replaces the user's recovery codes with ten new ones and returns them in clear, once. */
export async function replaceRecoveryCodes(ctx: Ctx, userId: string): Promise<string[]> {
  await RecoveryCodeRecord.scoped(ctx).where('user_id', userId).delete();
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  // Ten rows in one statement: set-based work goes through the scoped knex helper.
  await insertScoped(ctx, 'recovery_codes', codes.map((code) => ({
    id: uuidv7(ctx.now.getTime()),
    user_id: userId,
    code_hash: sha256Hex(normaliseRecoveryCode(code)),
    created_at: ctx.now,
  })));
  return codes;
}

/** Uses up one unused code; false when it is unknown or already used. */
export async function consumeRecoveryCode(ctx: Ctx, userId: string, code: string): Promise<boolean> {
  const normalised = normaliseRecoveryCode(code);
  if (normalised.length !== 10) return false;
  const used = await RecoveryCodeRecord.scoped(ctx)
    .where({ user_id: userId, code_hash: sha256Hex(normalised) })
    .whereNull('used_at')
    .patch({ used_at: ctx.now });
  return used === 1;
}

export async function deleteRecoveryCodes(ctx: Ctx, userId: string): Promise<void> {
  await RecoveryCodeRecord.scoped(ctx).where('user_id', userId).delete();
}
