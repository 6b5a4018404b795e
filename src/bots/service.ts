import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { uuidv7 } from '../core/ids.js';
import { paginatePage, type Page } from '../core/pagination.js';
import { scoped } from '../db/tenant-scope.js';
import { recordAudit } from '../audit/service.js';
import { flowProblems } from './validate.js';
import type {
  BotFlow, BotFlowCreate, BotFlowListQuery, BotFlowPatch, BotNode, BotSession, BotSessionDetail, BotSessionListQuery, TranscriptEntry,
} from './schemas.js';

/** Bot flows: CRUD with whole-graph validation, duplicate, and the sessions' read side (CONTRACT §16). */
export interface FlowRow {
  tenant_id: string; id: string; name: string; active: boolean; start_node: string; nodes: BotNode[];
  created_at: Date; updated_at: Date;
}

export interface SessionRow {
  tenant_id: string; id: string; flow_id: string; channel: string; conversation_key: string; conversation_id: string | null;
  status: BotSession['status']; current_node: string | null; fields: Record<string, string>; transcript: TranscriptEntry[];
  started_at: Date; last_activity_at: Date; ended_at: Date | null;
}

/** Nodes as stored: only the keys a node has (no `undefined` noise in the jsonb). */
function cleanNodes(nodes: BotNode[]): BotNode[] {
  return nodes.map((n) => ({
    id: n.id, type: n.type, text: n.text,
    ...(n.choices ? { choices: n.choices.map((c) => ({ label: c.label.trim(), target_node: c.target_node })) } : {}),
    ...(n.next ? { next: n.next } : {}),
    ...(n.field ? { field: n.field } : {}),
  }));
}

export function flowOut(row: FlowRow): BotFlow {
  return {
    id: row.id, name: row.name, active: row.active, start_node: row.start_node, nodes: row.nodes,
    created_at: toRfc3339(row.created_at)!, updated_at: toRfc3339(row.updated_at)!,
  };
}

export async function findFlow(ctx: Ctx, id: string): Promise<FlowRow | undefined> {
  return scoped<FlowRow>(ctx, 'bot_flows').where('id', id).first();
}

async function loadFlow(ctx: Ctx, id: string, forUpdate = false): Promise<FlowRow> {
  const qb = scoped<FlowRow>(ctx, 'bot_flows').where('id', id);
  if (forUpdate) qb.forUpdate();
  const row = await qb.first();
  if (!row) throw errors.notFound('bot flow', id);
  return row;
}

function check(startNode: string, nodes: BotNode[]): void {
  const problems = flowProblems(startNode, nodes);
  if (problems.length) throw errors.validation(problems);
}

export async function listFlows(ctx: Ctx, query: BotFlowListQuery): Promise<Page<BotFlow>> {
  const qb = scoped(ctx, 'bot_flows').orderByRaw('lower(name)').orderBy('id');
  if (query.active !== undefined) qb.where('active', query.active);
  return paginatePage<FlowRow, BotFlow>(query, qb, flowOut);
}

export async function getFlow(ctx: Ctx, id: string): Promise<BotFlow> {
  return flowOut(await loadFlow(ctx, id));
}

export async function createFlow(ctx: Ctx, input: BotFlowCreate): Promise<BotFlow> {
  check(input.start_node, input.nodes);
  const [row] = await ctx.trx('bot_flows').insert({
    tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), name: input.name.trim(), active: input.active ?? false,
    start_node: input.start_node, nodes: JSON.stringify(cleanNodes(input.nodes)), created_at: ctx.now, updated_at: ctx.now,
  }).returning('*') as FlowRow[];
  await recordAudit(ctx, { action: 'bot_flow.created', resourceType: 'bot_flow', resourceId: row!.id, changes: { name: row!.name, active: row!.active } });
  return flowOut(row!);
}

export async function updateFlow(ctx: Ctx, id: string, input: BotFlowPatch): Promise<BotFlow> {
  const before = await loadFlow(ctx, id, true);
  const startNode = input.start_node ?? before.start_node;
  const nodes = input.nodes ? cleanNodes(input.nodes) : before.nodes;
  if (input.start_node !== undefined || input.nodes !== undefined) check(startNode, nodes);
  const columns: Record<string, unknown> = { updated_at: ctx.now };
  if (input.name !== undefined) columns.name = input.name.trim();
  if (input.active !== undefined) columns.active = input.active;
  if (input.start_node !== undefined) columns.start_node = startNode;
  if (input.nodes !== undefined) columns.nodes = JSON.stringify(nodes);
  const [row] = await scoped(ctx, 'bot_flows').where('id', id).update(columns).returning('*') as FlowRow[];
  const changes = Object.fromEntries(Object.keys(columns).filter((k) => k !== 'updated_at' && k !== 'nodes').map((k) => [k, columns[k]]));
  await recordAudit(ctx, { action: 'bot_flow.updated', resourceType: 'bot_flow', resourceId: id, changes: { ...changes, ...(input.nodes ? { nodes: nodes.length } : {}) } });
  return flowOut(row!);
}

/**
 * Deletes a flow. Its sessions stay (they are history); an active one hands off at its next turn,
 * and widgets that named the flow go straight to people.
 */
export async function deleteFlow(ctx: Ctx, id: string): Promise<void> {
  const flow = await loadFlow(ctx, id, true);
  await scoped(ctx, 'webchat_widgets').where('bot_flow_id', id).update({ bot_flow_id: null, updated_at: ctx.now });
  await scoped(ctx, 'bot_flows').where('id', id).delete();
  await recordAudit(ctx, { action: 'bot_flow.deleted', resourceType: 'bot_flow', resourceId: id, changes: { name: flow.name } });
}

/** A copy named "<name> (copy)", inactive (CONTRACT §16). */
export async function duplicateFlow(ctx: Ctx, id: string): Promise<BotFlow> {
  const source = await loadFlow(ctx, id);
  const name = `${source.name} (copy)`;
  const [row] = await ctx.trx('bot_flows').insert({
    tenant_id: ctx.tenantId, id: uuidv7(ctx.now.getTime()), name, active: false, start_node: source.start_node,
    nodes: JSON.stringify(source.nodes), created_at: ctx.now, updated_at: ctx.now,
  }).returning('*') as FlowRow[];
  await recordAudit(ctx, { action: 'bot_flow.created', resourceType: 'bot_flow', resourceId: row!.id, changes: { name, duplicated_from: id } });
  return flowOut(row!);
}

export function sessionOut(row: SessionRow): BotSession {
  return {
    id: row.id, flow_id: row.flow_id, conversation_id: row.conversation_id, channel: row.channel, status: row.status,
    current_node: row.current_node, started_at: toRfc3339(row.started_at)!, ended_at: toRfc3339(row.ended_at),
  };
}

export async function listSessions(ctx: Ctx, query: BotSessionListQuery): Promise<Page<BotSession>> {
  const qb = scoped(ctx, 'bot_sessions').orderBy('started_at', 'desc').orderBy('id', 'desc')
    .select('tenant_id', 'id', 'flow_id', 'conversation_id', 'channel', 'status', 'current_node', 'started_at', 'ended_at');
  if (query.flow_id) qb.where('flow_id', query.flow_id);
  if (query.status) qb.where('status', query.status);
  if (query.channel) qb.where('channel', query.channel);
  return paginatePage<SessionRow, BotSession>(query, qb, sessionOut);
}

export async function getSession(ctx: Ctx, id: string): Promise<BotSessionDetail> {
  const row = await scoped<SessionRow>(ctx, 'bot_sessions').where('id', id).first();
  if (!row) throw errors.notFound('bot flow session', id);
  return { ...sessionOut(row), fields: row.fields, transcript: row.transcript };
}
