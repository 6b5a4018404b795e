import { Type, type Static } from '@sinclair/typebox';
import { NonBlank, Nullable, StringEnum, Timestamp } from '../core/schema-types.js';
import { pageParams } from '../core/pagination.js';

/** Live chat shapes (CONTRACT §16). */
export const CONVERSATION_STATUSES = ['bot', 'waiting', 'active', 'ended'] as const;
const Uuid = Type.String({ format: 'uuid' });
const Origin = Type.String({ maxLength: 300, pattern: '^https?://[^\\s/?#]+$', description: 'scheme://host[:port], no path' });

export const Widget = Type.Object({
  id: Uuid,
  name: Type.String(),
  allowed_origins: Type.Array(Type.String()),
  greeting: Type.String(),
  bot_flow_id: Nullable(Type.String()),
  offline_message: Type.String(),
  embed_snippet: Type.String(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
}, { $id: 'WebchatWidget' });
export type Widget = Static<typeof Widget>;

export const WidgetCreate = Type.Object({
  name: NonBlank({ maxLength: 200 }),
  allowed_origins: Type.Array(Origin, { minItems: 1, maxItems: 50 }),
  greeting: Type.Optional(Type.String({ maxLength: 2000 })),
  bot_flow_id: Type.Optional(Nullable(Type.String({ format: 'uuid' }))),
  offline_message: Type.Optional(Type.String({ maxLength: 2000 })),
}, { $id: 'WebchatWidgetCreate', additionalProperties: false });
export type WidgetCreate = Static<typeof WidgetCreate>;

export const VisitorStart = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 200 })),
  email: Type.Optional(Type.String({ maxLength: 320, format: 'email' })),
  message: Type.Optional(Type.String({ maxLength: 4000 })),
}, { $id: 'WebchatVisitorStart', additionalProperties: false });
export type VisitorStart = Static<typeof VisitorStart>;

export const VisitorStarted = Type.Object({
  conversation_id: Uuid,
  visitor_id: Uuid,
  visitor_token: Type.String({ description: 'hdv_…: the visitor\'s bearer token, shown once' }),
}, { $id: 'WebchatVisitorStarted' });

export const ChatMessageCreate = Type.Object({
  message: NonBlank({ maxLength: 4000 }),
}, { $id: 'WebchatMessageCreate', additionalProperties: false });
export type ChatMessageCreate = Static<typeof ChatMessageCreate>;

/** One line of a conversation as the visitor and the console see it. */
export const ChatMessage = Type.Object({
  id: Uuid,
  conversation_id: Uuid,
  from: StringEnum(['visitor', 'bot', 'agent'] as const),
  author_name: Type.String(),
  text: Type.String(),
  choices: Nullable(Type.Array(Type.String())),
  created_at: Timestamp(),
}, { $id: 'WebchatMessage' });
export type ChatMessage = Static<typeof ChatMessage>;

export const ChatMessageList = Type.Object({ data: Type.Array(ChatMessage) }, { $id: 'WebchatMessageList' });

export const VisitorRef = Type.Object({ id: Uuid, name: Nullable(Type.String()), email: Nullable(Type.String()) });

export const Conversation = Type.Object({
  id: Uuid,
  widget_id: Uuid,
  visitor: VisitorRef,
  status: StringEnum(CONVERSATION_STATUSES),
  assigned_agent_id: Nullable(Type.String()),
  offered_to_id: Nullable(Type.String({ description: 'The online agent this waiting conversation is offered to' })),
  ticket_id: Nullable(Type.String()),
  started_at: Timestamp(),
  ended_at: Nullable(Timestamp()),
  last_message_at: Timestamp(),
}, { $id: 'WebchatConversation' });
export type Conversation = Static<typeof Conversation>;

export const ConversationListQuery = Type.Object({
  ...pageParams,
  status: Type.Optional(StringEnum(CONVERSATION_STATUSES)),
}, { additionalProperties: false });
export type ConversationListQuery = Static<typeof ConversationListQuery>;

export const ClaimAnswer = Type.Object({
  conversation_id: Uuid,
  claimed_by: Type.Object({ id: Uuid, name: Type.String() }),
}, { $id: 'WebchatClaim' });
export type ClaimAnswer = Static<typeof ClaimAnswer>;

export const OnlineVisitor = Type.Object({
  id: Uuid, name: Nullable(Type.String()), email: Nullable(Type.String()), last_seen_at: Timestamp(), conversation_id: Nullable(Type.String()),
}, { $id: 'WebchatOnlineVisitor' });
export type OnlineVisitor = Static<typeof OnlineVisitor>;

export const PresenceInput = Type.Object({
  status: StringEnum(['online', 'away'] as const),
}, { $id: 'WebchatPresenceInput', additionalProperties: false });
export type PresenceInput = Static<typeof PresenceInput>;

export const Presence = Type.Object({
  user_id: Uuid,
  name: Type.String(),
  status: StringEnum(['online', 'away', 'offline'] as const),
  last_seen_at: Nullable(Timestamp()),
  expires_at: Nullable(Timestamp({ description: 'Offline after this instant without another heartbeat' })),
}, { $id: 'WebchatPresence' });
export type Presence = Static<typeof Presence>;

export const BlockCreate = Type.Object({
  visitor_id: Type.String({ format: 'uuid' }),
  reason: Type.Optional(Type.String({ maxLength: 1000 })),
}, { $id: 'WebchatBlockCreate', additionalProperties: false });
export type BlockCreate = Static<typeof BlockCreate>;

export const Block = Type.Object({
  id: Uuid, visitor_id: Uuid, reason: Type.String(), created_by: Nullable(Type.String()), created_at: Timestamp(),
}, { $id: 'WebchatBlock' });
export type Block = Static<typeof Block>;

export const StreamQuery = Type.Object({
  last_event_id: Type.Optional(Type.String({
    pattern: '^[0-9]{1,18}$', maxLength: 18,
    description: 'Resume after this event (for clients that cannot send the Last-Event-ID header); the header wins when both are sent',
  })),
}, { additionalProperties: false });

/** The `data` of a console stream event: the resource it is about. */
export const ConsoleStreamEvent = Type.Object({}, {
  $id: 'WebchatConsoleEvent', additionalProperties: true,
  description: 'conversation.created / conversation.updated: a WebchatConversation; message.created: a WebchatMessage; visitor.online / visitor.offline: a WebchatOnlineVisitor; presence.changed: a WebchatPresence',
});
export const VisitorStreamEvent = Type.Object({}, {
  $id: 'WebchatVisitorEvent', additionalProperties: true,
  description: 'message: a WebchatMessage; agent_joined: {conversation_id, agent: {id, name}}; ended: {conversation_id, ended_at}',
});

export const PageQueryOnly = Type.Object({ ...pageParams }, { additionalProperties: false });
