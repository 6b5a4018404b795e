import { route } from '../route.js';
import { ListOf, PageQuery } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { User } from '../../src/directory/user-schemas.js';
import {
  createOrganization, deleteOrganization, getOrganization, listOrganizationMembers, listOrganizations, organizationFilterValues, updateOrganization,
} from '../../src/directory/organizations.js';
import {
  FilterValues, FilterValuesQuery, Organization, OrganizationCreate, OrganizationListQuery, OrganizationUpdate,
} from '../../src/directory/schemas.js';

/** Customer organizations (SPEC "Users, consent, teams, organizations, skills"). */
const tags = ['organizations'];

export const organizationsRoutes = [
  route({
    method: 'GET', url: '/organizations', access: { kind: 'token', scope: 'organizations:read' }, summary: 'List organizations', tags,
    schema: { querystring: OrganizationListQuery, response: { 200: ListOf(Organization) } },
    handler: (ctx, { query }) => listOrganizations(ctx, query),
  }),
  route({
    method: 'POST', url: '/organizations', access: { kind: 'token', scope: 'organizations:write' }, summary: 'Create an organization', tags,
    errors: ['already_exists'],
    schema: { body: OrganizationCreate, response: { 201: Organization } }, status: 201,
    example: { body: { name: 'Acme Corp', domains: ['acme.example'], website: 'https://acme.example', shares_tickets: true } },
    handler: (ctx, { body }) => createOrganization(ctx, body),
  }),
  route({
    method: 'GET', url: '/organizations/filter-values', access: { kind: 'token', scope: 'organizations:read' }, summary: 'Organization names for filter autocomplete', tags,
    schema: { querystring: FilterValuesQuery, response: { 200: FilterValues } },
    handler: (ctx, { query }) => organizationFilterValues(ctx, query),
  }),
  route({
    method: 'GET', url: '/organizations/:id', access: { kind: 'token', scope: 'organizations:read' }, summary: 'An organization', tags,
    schema: { params: IdParams, response: { 200: Organization } },
    handler: (ctx, { params }) => getOrganization(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/organizations/:id', access: { kind: 'token', scope: 'organizations:write' }, summary: 'Update an organization', tags,
    errors: ['already_exists'],
    schema: { params: IdParams, body: OrganizationUpdate, response: { 200: Organization } },
    example: { body: { notes: 'Key account' } },
    handler: (ctx, { params, body }) => updateOrganization(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/organizations/:id', access: { kind: 'token', scope: 'organizations:delete' }, summary: 'Delete an organization (members stay, unlinked)', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteOrganization(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/organizations/:id/members', access: { kind: 'token', scope: 'organizations:read' }, summary: "An organization's members", tags,
    schema: { params: IdParams, querystring: PageQuery, response: { 200: ListOf(User) } },
    handler: (ctx, { params, query }) => listOrganizationMembers(ctx, params.id, query),
  }),
];
