import { ADMIN, route } from '../route.js';
import { ListOf } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { changeRole, createUser, getUser, listUsers, setUserOrganization, updateUser } from '../../src/directory/users.js';
import { OrganizationLink } from '../../src/directory/schemas.js';
import { inviteUser } from '../../src/directory/invitations.js';
import { seatQuota, seatUsage, setSeatQuota } from '../../src/directory/seats.js';
import {
  Invitation, RoleChange, SeatQuota, SeatUsageSchema, User, UserCreate, UserListQuery, UserUpdate,
} from '../../src/directory/user-schemas.js';

/** Users, roles, invitations and agent seats (SPEC "Users, consent, teams…"). */
const tags = ['users'];

export const usersRoutes = [
  route({
    method: 'GET', url: '/users', access: { kind: 'token', scope: 'users:read' }, summary: 'List users (staff roster and customers)', tags,
    schema: { querystring: UserListQuery, response: { 200: ListOf(User) } },
    handler: (ctx, { query }) => listUsers(ctx, query),
  }),
  route({
    method: 'POST', url: '/users', access: { kind: 'token', scope: 'users:write' }, summary: 'Create a user', tags,
    errors: ['already_exists', 'conflict'],
    schema: { body: UserCreate, response: { 201: User } }, status: 201,
    example: { body: { email: 'new.customer@example.com', name: 'New Customer' } },
    handler: (ctx, { body }) => createUser(ctx, body),
  }),
  // Static paths before `/users/:id` for readers; Fastify prefers static segments either way.
  route({
    method: 'GET', url: '/users/seats', access: { kind: 'token', scope: 'users:write' }, summary: 'Agent seats: used against licensed and quota', tags,
    schema: { response: { 200: SeatUsageSchema } },
    handler: (ctx) => seatUsage(ctx),
  }),
  route({
    method: 'GET', url: '/users/instance-seat-quota', access: { kind: 'token', scope: 'users:write' }, summary: 'The tenant seat quota', tags,
    schema: { response: { 200: SeatQuota } },
    handler: (ctx) => seatQuota(ctx),
  }),
  route({
    method: 'PUT', url: '/users/instance-seat-quota', access: { kind: 'token', scope: 'users:write', roles: ADMIN }, summary: 'Set the tenant seat quota (null = none)', tags,
    schema: { body: SeatQuota, response: { 200: SeatQuota } },
    example: { body: { quota: 10 } },
    handler: (ctx, { body }) => setSeatQuota(ctx, body.quota),
  }),
  route({
    method: 'GET', url: '/users/:id', access: { kind: 'token', scope: 'users:read' }, summary: 'A user', tags,
    schema: { params: IdParams, response: { 200: User } },
    handler: (ctx, { params }) => getUser(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/users/:id', access: { kind: 'token', scope: 'users:write' }, summary: 'Update a user profile or deactivate a user', tags,
    errors: ['already_exists', 'conflict'],
    schema: { params: IdParams, body: UserUpdate, response: { 200: User } },
    example: { body: { notes: 'Prefers email' } },
    handler: (ctx, { params, body }) => updateUser(ctx, params.id, body),
  }),
  route({
    method: 'PATCH', url: '/users/:id/role', access: { kind: 'token', scope: 'users:write' }, summary: 'Change a user role', tags,
    errors: ['conflict', 'forbidden'],
    schema: { params: IdParams, body: RoleChange, response: { 200: User } },
    example: { body: { role: 'agent' } },
    handler: (ctx, { params, body }) => changeRole(ctx, params.id, body.role),
  }),
  route({
    method: 'PATCH', url: '/users/:id/organization', access: { kind: 'token', scope: 'users:write' }, summary: 'Link a user to an organization (null unlinks)', tags,
    schema: { params: IdParams, body: OrganizationLink, response: { 200: User } },
    example: { body: { organization_id: null } },
    handler: (ctx, { params, body }) => setUserOrganization(ctx, params.id, body.organization_id),
  }),
  route({
    method: 'POST', url: '/users/:id/invite', access: { kind: 'token', scope: 'users:write' }, summary: 'Send or resend an invitation', tags,
    errors: ['conflict'],
    schema: { params: IdParams, response: { 202: Invitation } }, status: 202,
    handler: (ctx, { params }) => inviteUser(ctx, params.id),
  }),
];
