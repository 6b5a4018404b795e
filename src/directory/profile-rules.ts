import { IANAZone } from 'luxon';
import type { FieldProblem } from '../core/errors.js';

/**
 * Rules for the profile fields a schema cannot express, shared by the staff directory
 * (POST/PATCH /users) and the caller's own profile (PATCH /auth/me): one wording everywhere.
 */
export interface ProfileFields {
  name?: string;
  avatar_url?: string | null;
  timezone?: string | null;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

export function profileProblems(input: ProfileFields): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (input.name !== undefined && !input.name.trim()) problems.push({ field: 'name', message: 'must not be blank' });
  if (input.avatar_url != null && !isHttpUrl(input.avatar_url)) problems.push({ field: 'avatar_url', message: 'must be an http or https URL' });
  if (input.timezone != null && !IANAZone.isValidZone(input.timezone)) {
    problems.push({ field: 'timezone', message: 'must be an IANA time zone name such as Europe/Berlin' });
  }
  return problems;
}
