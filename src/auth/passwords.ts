import { hash, verify, Algorithm } from '@node-rs/argon2';
import { errors, type FieldProblem } from '../core/errors.js';

/** Argon2id with the OWASP-recommended minimum parameters (19 MiB, t=2, p=1). */
const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 };

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

/**
 * The password policy. The API schemas state the same bounds (`NewPassword` in schemas.ts), so a
 * request is refused before it reaches here; this guards the other callers (CLI, first start).
 * Lengths count characters (code points), as JSON Schema's minLength does, not UTF-16 units.
 */
export function passwordProblems(field: string, password: string): FieldProblem[] {
  const length = [...password].length;
  if (length < PASSWORD_MIN) return [{ field, message: `must be at least ${PASSWORD_MIN} characters` }];
  if (length > PASSWORD_MAX) return [{ field, message: `must be at most ${PASSWORD_MAX} characters` }];
  return [];
}

export function assertPasswordPolicy(field: string, password: string): void {
  const problems = passwordProblems(field, password);
  if (problems.length) throw errors.validation(problems);
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

// A hash of a random value, verified against when the account does not exist, so a login for an
// unknown email costs the same time as one with a wrong password (no account enumeration).
let decoy: Promise<string> | null = null;

export async function verifyPassword(storedHash: string | null | undefined, password: string): Promise<boolean> {
  if (!storedHash) {
    decoy ??= hash('decoy-password-never-matches', OPTIONS);
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  return verify(storedHash, password).catch(() => false);
}
