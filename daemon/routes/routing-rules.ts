import { route } from '../route.js';
import { ListOf, PageQuery } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import {
  createRoutingRule, deleteRoutingRule, getRoutingRule, listRoutingRules, updateRoutingRule,
} from '../../src/automation/routing-rules.js';
import { RoutingRule, RoutingRuleCreate, RoutingRuleUpdate } from '../../src/automation/schemas.js';

/** Routing rules (SPEC "Users, consent, teams, organizations, skills, routing", CONTRACT §4). */
const tags = ['routing-rules'];

export const routingRulesRoutes = [
  route({
    method: 'GET', url: '/routing-rules', access: { kind: 'token', scope: 'routing_rules:read' }, summary: 'List routing rules in the order they run', tags,
    schema: { querystring: PageQuery, response: { 200: ListOf(RoutingRule) } },
    handler: (ctx, { query }) => listRoutingRules(ctx, query),
  }),
  route({
    method: 'POST', url: '/routing-rules', access: { kind: 'token', scope: 'routing_rules:write' }, summary: 'Create a routing rule', tags,
    errors: ['already_exists'],
    schema: { body: RoutingRuleCreate, response: { 201: RoutingRule } }, status: 201,
    example: { body: { name: 'Urgent email to the on-call desk', conditions: [{ field: 'channel', operator: 'eq', value: 'email' }], actions: [{ type: 'set_priority', value: 'high' }] } },
    handler: (ctx, { body }) => createRoutingRule(ctx, body),
  }),
  route({
    method: 'GET', url: '/routing-rules/:id', access: { kind: 'token', scope: 'routing_rules:read' }, summary: 'A routing rule', tags,
    schema: { params: IdParams, response: { 200: RoutingRule } },
    handler: (ctx, { params }) => getRoutingRule(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/routing-rules/:id', access: { kind: 'token', scope: 'routing_rules:write' }, summary: 'Update a routing rule', tags,
    errors: ['already_exists'],
    schema: { params: IdParams, body: RoutingRuleUpdate, response: { 200: RoutingRule } },
    example: { body: { active: false } },
    handler: (ctx, { params, body }) => updateRoutingRule(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/routing-rules/:id', access: { kind: 'token', scope: 'routing_rules:delete' }, summary: 'Delete a routing rule', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteRoutingRule(ctx, params.id),
  }),
];
