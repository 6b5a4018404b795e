import type { Role } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { ROLE_SCOPES, SCOPE_RESOURCES } from '../auth/scopes.js';

/**
 * The permission matrix of a role (CONTRACT §19) and its one translation into scopes: a custom
 * role is enforced by the same scope checks as every other token (daemon/route.ts), there is no
 * second permission system. `list` and `view` grant `<resource>:read`, `edit` `:write`, `delete`
 * `:delete`.
 */
export const PERMISSION_ACTIONS = ['list', 'view', 'edit', 'delete'] as const;
export type PermissionAction = (typeof PERMISSION_ACTIONS)[number];
export type Permissions = Record<string, PermissionAction[]>;

const ACTION_SCOPE: Record<PermissionAction, 'read' | 'write' | 'delete'> = { list: 'read', view: 'read', edit: 'write', delete: 'delete' };

/** The scopes a matrix grants, sorted and without duplicates. */
export function scopesOf(permissions: Permissions): string[] {
  const scopes = new Set<string>();
  for (const [resource, actions] of Object.entries(permissions)) {
    for (const action of actions) scopes.add(`${resource}:${ACTION_SCOPE[action]}`);
  }
  return [...scopes].sort();
}

/** Checks a matrix from a request; returns it normalised (actions deduplicated, in canonical order). */
export function checkPermissions(input: Record<string, string[]>): Permissions {
  const problems: FieldProblem[] = [];
  const out: Permissions = {};
  for (const [resource, actions] of Object.entries(input)) {
    if (!(SCOPE_RESOURCES as readonly string[]).includes(resource)) {
      problems.push({ field: resource, message: `is not a resource; one of ${SCOPE_RESOURCES.join(', ')}` });
      continue;
    }
    const bad = actions.filter((a) => !(PERMISSION_ACTIONS as readonly string[]).includes(a));
    if (bad.length) {
      problems.push({ field: resource, message: `actions must be among ${PERMISSION_ACTIONS.join(', ')}` });
      continue;
    }
    const kept = PERMISSION_ACTIONS.filter((a) => actions.includes(a));
    if (kept.length) out[resource] = kept;
  }
  if (problems.length) throw errors.validation(problems);
  return out;
}

/** The matrix a system role's scopes amount to (for display in GET /roles). */
export function systemPermissions(role: Role): Permissions {
  const held = ROLE_SCOPES[role];
  const out: Permissions = {};
  for (const resource of SCOPE_RESOURCES) {
    const has = (action: string) => held.includes('admin') || held.includes(`${resource}:*`) || held.includes(`${resource}:${action}`);
    const actions = PERMISSION_ACTIONS.filter((a) => has(ACTION_SCOPE[a]));
    if (actions.length) out[resource] = actions;
  }
  return out;
}
