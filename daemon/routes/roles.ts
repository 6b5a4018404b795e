import { ADMIN, route } from '../route.js';
import { ListOf } from '../../src/core/pagination.js';
import { createRole, deleteRole, getRole, listRoles, setRolePermissions, updateRole } from '../../src/rbac/roles.js';
import { PermissionMatrix, Role, RoleCreate, RoleListQuery, RoleParams, RoleUpdate } from '../../src/rbac/schemas.js';

/** Roles and permission matrices (SPEC "Role", CONTRACT §19); custom roles need the RBAC module. */
const tags = ['roles'];
const access = { kind: 'token', roles: ADMIN } as const;

export const rolesRoutes = [
  route({
    method: 'GET', url: '/roles', access, summary: 'System and custom roles with their permission matrices', tags,
    schema: { querystring: RoleListQuery, response: { 200: ListOf(Role) } },
    handler: (ctx, { query }) => listRoles(ctx, query),
  }),
  route({
    method: 'GET', url: '/roles/:id', access, summary: 'A role (a custom role by id, a system role by name)', tags,
    schema: { params: RoleParams, response: { 200: Role } },
    handler: (ctx, { params }) => getRole(ctx, params.id),
  }),
  route({
    method: 'POST', url: '/roles', access, feature: 'rbac', summary: 'Create a custom role (no permissions yet)', tags,
    errors: ['already_exists'],
    schema: { body: RoleCreate, response: { 201: Role } }, status: 201,
    example: { body: { name: 'Billing agent', description: 'Works billing tickets' } },
    handler: (ctx, { body }) => createRole(ctx, body),
  }),
  route({
    method: 'PATCH', url: '/roles/:id', access, feature: 'rbac', summary: 'Rename or describe a custom role', tags,
    errors: ['already_exists', 'conflict'],
    schema: { params: RoleParams, body: RoleUpdate, response: { 200: Role } },
    example: { body: { description: 'Works billing tickets and reads organizations' } },
    handler: (ctx, { params, body }) => updateRole(ctx, params.id, body),
  }),
  route({
    method: 'PUT', url: '/roles/:id/permissions', access, feature: 'rbac', summary: "Replace a custom role's permission matrix", tags,
    description: 'Maps a resource (a scope\'s resource part) to actions: `list` and `view` grant `<resource>:read`, `edit` `<resource>:write`, `delete` `<resource>:delete`. Holders of the role get exactly these scopes from their next request on. System roles answer 409.',
    errors: ['conflict'],
    schema: { params: RoleParams, body: PermissionMatrix, response: { 200: Role } },
    example: { body: { tickets: ['list', 'view', 'edit'], organizations: ['list', 'view'] } },
    handler: (ctx, { params, body }) => setRolePermissions(ctx, params.id, body as Record<string, string[]>),
  }),
  route({
    method: 'DELETE', url: '/roles/:id', access, feature: 'rbac', summary: 'Delete a custom role (409 while a user holds it)', tags,
    errors: ['conflict'],
    schema: { params: RoleParams }, status: 204,
    handler: (ctx, { params }) => deleteRole(ctx, params.id),
  }),
];
