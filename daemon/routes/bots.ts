import { route } from '../route.js';
import { ListOf } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import {
  BotFlow, BotFlowCreate, BotFlowListQuery, BotFlowPatch, BotSession, BotSessionDetail, BotSessionListQuery,
} from '../../src/bots/schemas.js';
import { createFlow, deleteFlow, duplicateFlow, getFlow, getSession, listFlows, listSessions, updateFlow } from '../../src/bots/service.js';

/** Bot flows and their sessions (SPEC "Bot flows", CONTRACT §16). */
const tags = ['bot-flows'];
const read = { kind: 'token', scope: 'bot_flows:read' } as const;
const write = { kind: 'token', scope: 'bot_flows:write' } as const;

export const exampleFlow = {
  name: 'Front door', active: true, start_node: 'hello',
  nodes: [
    { id: 'hello', type: 'message', text: 'Hi! I am the help bot.', next: 'topic' },
    { id: 'topic', type: 'question', text: 'What do you need?', choices: [{ label: 'Billing', target_node: 'email' }, { label: 'Talk to a person', target_node: 'human' }] },
    { id: 'email', type: 'collect', text: 'Your email, please?', field: 'email', next: 'human' },
    { id: 'human', type: 'handoff', text: 'Passing you to a colleague.' },
  ],
};

export const botsRoutes = [
  route({
    method: 'GET', url: '/bot-flows', access: read, summary: 'List bot flows (by name)', tags,
    schema: { querystring: BotFlowListQuery, response: { 200: ListOf(BotFlow) } },
    handler: (ctx, { query }) => listFlows(ctx, query),
  }),
  route({
    method: 'POST', url: '/bot-flows', access: write, summary: 'Create a bot flow (the whole graph is validated)', tags,
    description: 'Every `next` and `target_node` must name a node, `start_node` must be a node; 422 names each problem.',
    schema: { body: BotFlowCreate, response: { 201: BotFlow } }, status: 201,
    example: { body: exampleFlow },
    handler: (ctx, { body }) => createFlow(ctx, body),
  }),
  route({
    method: 'GET', url: '/bot-flows/:id', access: read, summary: 'One bot flow', tags,
    schema: { params: IdParams, response: { 200: BotFlow } },
    handler: (ctx, { params }) => getFlow(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/bot-flows/:id', access: write, summary: 'Change a bot flow (name, active, start_node, nodes)', tags,
    schema: { params: IdParams, body: BotFlowPatch, response: { 200: BotFlow } },
    example: { body: { active: false } },
    handler: (ctx, { params, body }) => updateFlow(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/bot-flows/:id', access: { kind: 'token', scope: 'bot_flows:delete' }, summary: 'Delete a bot flow (its sessions stay)', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteFlow(ctx, params.id),
  }),
  route({
    method: 'POST', url: '/bot-flows/:id/duplicate', access: write, summary: 'Copy a bot flow as "<name> (copy)", inactive', tags,
    schema: { params: IdParams, response: { 201: BotFlow } }, status: 201,
    handler: (ctx, { params }) => duplicateFlow(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/bot-flow-sessions', access: read, summary: 'List bot sessions (newest first)', tags,
    schema: { querystring: BotSessionListQuery, response: { 200: ListOf(BotSession) } },
    handler: (ctx, { query }) => listSessions(ctx, query),
  }),
  route({
    method: 'GET', url: '/bot-flow-sessions/:id', access: read, summary: 'One bot session with its full transcript', tags,
    schema: { params: IdParams, response: { 200: BotSessionDetail } },
    handler: (ctx, { params }) => getSession(ctx, params.id),
  }),
];
