import { Type, type Static } from '@sinclair/typebox';
import { NonBlank, Nullable, StringEnum, Timestamp } from '../core/schema-types.js';
import { pageParams } from '../core/pagination.js';

/** Bot flows and their sessions (CONTRACT §16). */
export const NODE_TYPES = ['message', 'question', 'collect', 'handoff', 'end'] as const;
export const COLLECT_FIELDS = ['name', 'email'] as const;
export const SESSION_STATUSES = ['active', 'completed', 'handed_off', 'abandoned'] as const;

const NodeId = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' });

export const BotChoice = Type.Object({
  label: NonBlank({ maxLength: 200 }),
  target_node: NodeId,
}, { additionalProperties: false });

export const BotNode = Type.Object({
  id: NodeId,
  type: StringEnum(NODE_TYPES),
  text: Type.String({ maxLength: 4000 }),
  choices: Type.Optional(Type.Array(BotChoice, { maxItems: 20 })),
  next: Type.Optional(Nullable(NodeId)),
  field: Type.Optional(StringEnum(COLLECT_FIELDS)),
}, { $id: 'BotNode', additionalProperties: false });
export type BotNode = Static<typeof BotNode>;

const Nodes = Type.Array(BotNode, { minItems: 1, maxItems: 200 });

export const BotFlow = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  active: Type.Boolean(),
  start_node: Type.String(),
  nodes: Type.Array(BotNode),
  created_at: Timestamp(),
  updated_at: Timestamp(),
}, { $id: 'BotFlow' });
export type BotFlow = Static<typeof BotFlow>;

export const BotFlowCreate = Type.Object({
  name: NonBlank({ maxLength: 200 }),
  active: Type.Optional(Type.Boolean()),
  start_node: NodeId,
  nodes: Nodes,
}, { $id: 'BotFlowCreate', additionalProperties: false });
export type BotFlowCreate = Static<typeof BotFlowCreate>;

export const BotFlowPatch = Type.Object({
  name: Type.Optional(NonBlank({ maxLength: 200 })),
  active: Type.Optional(Type.Boolean()),
  start_node: Type.Optional(NodeId),
  nodes: Type.Optional(Nodes),
}, { $id: 'BotFlowPatch', additionalProperties: false, minProperties: 1 });
export type BotFlowPatch = Static<typeof BotFlowPatch>;

export const BotFlowListQuery = Type.Object({ ...pageParams, active: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
export type BotFlowListQuery = Static<typeof BotFlowListQuery>;

export const TranscriptEntry = Type.Object({
  at: Timestamp(),
  from: StringEnum(['bot', 'visitor'] as const),
  node_id: Nullable(Type.String()),
  text: Type.String(),
}, { $id: 'BotTranscriptEntry' });
export type TranscriptEntry = Static<typeof TranscriptEntry>;

const sessionFields = {
  id: Type.String({ format: 'uuid' }),
  flow_id: Type.String({ format: 'uuid' }),
  conversation_id: Nullable(Type.String()),
  channel: Type.String(),
  status: StringEnum(SESSION_STATUSES),
  current_node: Nullable(Type.String()),
  started_at: Timestamp(),
  ended_at: Nullable(Timestamp()),
};
export const BotSession = Type.Object(sessionFields, { $id: 'BotSession' });
export type BotSession = Static<typeof BotSession>;
export const BotSessionDetail = Type.Object({
  ...sessionFields,
  fields: Type.Object({ name: Type.Optional(Type.String()), email: Type.Optional(Type.String()) }),
  transcript: Type.Array(TranscriptEntry),
}, { $id: 'BotSessionDetail' });
export type BotSessionDetail = Static<typeof BotSessionDetail>;

export const BotSessionListQuery = Type.Object({
  ...pageParams,
  flow_id: Type.Optional(Type.String({ format: 'uuid' })),
  status: Type.Optional(StringEnum(SESSION_STATUSES)),
  channel: Type.Optional(Type.String({ maxLength: 40 })),
}, { additionalProperties: false });
export type BotSessionListQuery = Static<typeof BotSessionListQuery>;
