import { STAFF, route } from '../route.js';
import { ListOf } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { createTag, deleteTag, getTag, listTags, updateTag } from '../../src/automation/tags.js';
import { getTicketTags, organizationTagProfile, replaceTicketTags, userTagProfile } from '../../src/automation/ticket-tags.js';
import { Tag, TagCreate, TagListQuery, TagProfile, TagUpdate, TicketTags, TicketTagsReplace } from '../../src/automation/schemas.js';

/** Tags: the catalogue, a ticket's tags, and derived tag profiles (SPEC "Tags, saved filters…"). */
const tags = ['tags'];

export const tagsRoutes = [
  route({
    method: 'GET', url: '/tags', access: { kind: 'token', scope: 'tags:read' }, summary: 'List catalogued tags', tags,
    schema: { querystring: TagListQuery, response: { 200: ListOf(Tag) } },
    handler: (ctx, { query }) => listTags(ctx, query),
  }),
  route({
    method: 'POST', url: '/tags', access: { kind: 'token', scope: 'tags:write' }, summary: 'Create a tag', tags,
    errors: ['already_exists'],
    schema: { body: TagCreate, response: { 201: Tag } }, status: 201,
    example: { body: { name: 'billing', color: '#1e90ff' } },
    handler: (ctx, { body }) => createTag(ctx, body),
  }),
  route({
    method: 'GET', url: '/tags/:id', access: { kind: 'token', scope: 'tags:read' }, summary: 'A tag', tags,
    schema: { params: IdParams, response: { 200: Tag } },
    handler: (ctx, { params }) => getTag(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/tags/:id', access: { kind: 'token', scope: 'tags:write' }, summary: 'Rename or recolour a tag (renames it on every ticket)', tags,
    errors: ['already_exists'],
    schema: { params: IdParams, body: TagUpdate, response: { 200: Tag } },
    example: { body: { color: '#ff8800' } },
    handler: (ctx, { params, body }) => updateTag(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/tags/:id', access: { kind: 'token', scope: 'tags:delete' }, summary: 'Delete a tag (removes it from every ticket)', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteTag(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/tickets/:id/tags', access: { kind: 'token', scope: 'tags:read', roles: STAFF }, summary: "A ticket's tags", tags,
    schema: { params: IdParams, response: { 200: TicketTags } },
    handler: (ctx, { params }) => getTicketTags(ctx, params.id),
  }),
  route({
    method: 'PUT', url: '/tickets/:id/tags', access: { kind: 'token', scope: 'tags:write', roles: STAFF }, summary: "Replace a ticket's tags", tags,
    errors: ['conflict'],
    schema: { params: IdParams, body: TicketTagsReplace, response: { 200: TicketTags } },
    example: { body: { tags: ['billing', 'vip'] } },
    handler: (ctx, { params, body }) => replaceTicketTags(ctx, params.id, body),
  }),
  route({
    method: 'GET', url: '/users/:id/tag-profile', access: { kind: 'token', scope: 'tags:read', roles: STAFF }, summary: "Tag counts over a customer's tickets", tags,
    schema: { params: IdParams, response: { 200: TagProfile } },
    handler: (ctx, { params }) => userTagProfile(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/organizations/:id/tag-profile', access: { kind: 'token', scope: 'tags:read', roles: STAFF }, summary: "Tag counts over an organization's tickets", tags,
    schema: { params: IdParams, response: { 200: TagProfile } },
    handler: (ctx, { params }) => organizationTagProfile(ctx, params.id),
  }),
];
