import { Type, type Static } from '@sinclair/typebox';
import { SCOPE_RESOURCES } from '../auth/scopes.js';
import { pageParams } from '../core/pagination.js';
import { NonBlank, StringEnum } from '../core/schema-types.js';
import { PERMISSION_ACTIONS } from './permissions.js';

/** Request and response schemas of /roles (CONTRACT §19). */
const Actions = Type.Array(StringEnum(PERMISSION_ACTIONS), { maxItems: 4 });

/** `{<resource>: [actions]}`; a resource is a scope's resource part. */
export const PermissionMatrix = Type.Object(
  Object.fromEntries(SCOPE_RESOURCES.map((r) => [r, Type.Optional(Actions)])),
  { $id: 'PermissionMatrix', additionalProperties: false, description: 'list and view grant <resource>:read, edit <resource>:write, delete <resource>:delete' },
);
export type PermissionMatrixIn = Record<string, string[]>;

export const Role = Type.Object({
  id: Type.String({ description: 'A UUID; for a system role, its name' }),
  name: Type.String(),
  description: Type.String(),
  system: Type.Boolean(),
  permissions: Type.Record(Type.String(), Type.Array(StringEnum(PERMISSION_ACTIONS))),
  /** The scopes the matrix grants: what a user holding the role may do. */
  scopes: Type.Array(Type.String()),
  users: Type.Integer({ description: 'Active and inactive users holding the role' }),
  created_at: Type.Union([Type.String(), Type.Null()]),
  updated_at: Type.Union([Type.String(), Type.Null()]),
}, { $id: 'Role' });
export type RoleOut = Static<typeof Role>;

export const RoleCreate = Type.Object({
  name: NonBlank({ maxLength: 64 }),
  description: Type.Optional(Type.String({ maxLength: 500 })),
}, { $id: 'RoleCreate', additionalProperties: false });
export type RoleCreateIn = Static<typeof RoleCreate>;

export const RoleUpdate = Type.Object({
  name: Type.Optional(NonBlank({ maxLength: 64 })),
  description: Type.Optional(Type.String({ maxLength: 500 })),
}, { $id: 'RoleUpdate', additionalProperties: false, minProperties: 1 });
export type RoleUpdateIn = Static<typeof RoleUpdate>;

/** A role is addressed by its UUID, or a system role by its name. */
export const RoleParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const RoleListQuery = Type.Object(pageParams);
