import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { STAFF, route } from '../route.js';
import { BinaryReply } from '../binary.js';
import { ListOf } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import {
  Block, BlockCreate, ChatMessage, ChatMessageCreate, ChatMessageList, ClaimAnswer, ConsoleStreamEvent, Conversation,
  ConversationListQuery, OnlineVisitor, PageQueryOnly, Presence, PresenceInput, StreamQuery, VisitorStart, VisitorStarted,
  VisitorStreamEvent, Widget, WidgetCreate,
} from '../../src/webchat/schemas.js';
import { createWidget, getWidget } from '../../src/webchat/widgets.js';
import { listVisitorMessages, postVisitorMessage, startConversation, visitorPing, visitorStream } from '../../src/webchat/visitors.js';
import {
  createBlock, deleteBlock, getConversation, goOffline, heartbeat, listBlocks, listConversationMessages, listConversations, listOnlineVisitors,
} from '../../src/webchat/console.js';
import { claimConversation, endConversation, releaseConversation, replyToConversation } from '../../src/webchat/conversations.js';
import { openConsoleStream, type ResumePoint } from '../../src/webchat/events.js';
import { widgetScript } from '../../src/webchat/widget-script.js';

/** Live chat (SPEC "Live chat", CONTRACT §16): widgets, the public visitor API, the agent console. */
const tags = ['webchat'];
const consoleRead = { kind: 'token', scope: 'webchat_console:read', roles: STAFF } as const;
const consoleWrite = { kind: 'token', scope: 'webchat_console:write', roles: STAFF } as const;
const consoleDelete = { kind: 'token', scope: 'webchat_console:delete', roles: STAFF } as const;
const visitor = { kind: 'public' } as const;
const visitorErrors = ['unauthenticated', 'forbidden'] as const;

function resumeOf(request: FastifyRequest, query: { last_event_id?: string }): ResumePoint {
  const header = request.headers['last-event-id'];
  const fromHeader = (Array.isArray(header) ? header[0] : header)?.trim() || null;
  return fromHeader !== null ? { lastEventId: fromHeader, field: 'Last-Event-ID' } : { lastEventId: query.last_event_id ?? null, field: 'last_event_id' };
}

const widgetExample = {
  name: 'Website', allowed_origins: ['https://www.example.com'], greeting: 'Hello! How can we help?',
  offline_message: 'We are away; leave a message and we will answer by email.',
};

export const webchatRoutes = [
  // ---- Widgets ----
  route({
    method: 'POST', url: '/webchat/widgets', access: { kind: 'token', scope: 'channel_sources:write' }, summary: 'Create a chat widget (answers its embed snippet)', tags,
    schema: { body: WidgetCreate, response: { 201: Widget } }, status: 201,
    example: { body: widgetExample },
    handler: (ctx, { body }) => createWidget(ctx, body),
  }),
  route({
    method: 'GET', url: '/webchat/widgets/:id', access: { kind: 'token', scope: 'channel_sources:read' }, summary: 'One chat widget', tags,
    schema: { params: IdParams, response: { 200: Widget } },
    handler: (ctx, { params }) => getWidget(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/webchat/widget.js', root: true, access: { kind: 'public' }, operationId: 'webchat.widgetScript',
    summary: 'The embeddable chat widget script (JavaScript)', tags, transaction: false,
    binary: { description: 'application/javascript: the dependency-free widget that embed_snippet loads', ranges: false },
    schema: {},
    handler: async () => new BinaryReply(200, {
      'Content-Type': 'application/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=300',
      'X-Content-Type-Options': 'nosniff', 'Cross-Origin-Resource-Policy': 'cross-origin',
    }, Readable.from([Buffer.from(widgetScript(), 'utf8')])),
  }),

  // ---- The visitor (public; the visitor token is the credential) ----
  route({
    method: 'POST', url: '/webchat/widgets/:id/conversations', access: visitor, operationId: 'webchat.visitor.start',
    summary: 'A visitor starts a conversation (Origin must be one of the widget\'s allowed_origins)', tags,
    description: 'Public. Answers the visitor token (hdv_…) once; later visitor calls send it as a bearer token.',
    errors: ['forbidden'],
    schema: { params: IdParams, body: VisitorStart, response: { 201: VisitorStarted } }, status: 201,
    example: { body: { name: 'Ada', email: 'ada@example.com', message: 'Hello' } },
    handler: (ctx, { params, body, request }) => startConversation(ctx, params.id, request, body ?? {}),
  }),
  route({
    method: 'POST', url: '/webchat/visitor/messages', access: visitor, operationId: 'webchat.visitor.messages.create',
    summary: 'The visitor writes (Authorization: Bearer hdv_…); rate-limited per visitor', tags,
    errors: [...visitorErrors, 'conflict'],
    schema: { body: ChatMessageCreate, response: { 201: ChatMessage } }, status: 201,
    example: { body: { message: 'My export fails' } },
    handler: (ctx, { body, request }) => postVisitorMessage(ctx, request, body.message),
  }),
  route({
    method: 'GET', url: '/webchat/visitor/messages', access: visitor, operationId: 'webchat.visitor.messages.list',
    summary: 'The visitor\'s conversation so far (Authorization: Bearer hdv_…)', tags, transaction: true,
    errors: visitorErrors,
    schema: { response: { 200: ChatMessageList } },
    handler: (ctx, { request }) => listVisitorMessages(ctx, request),
  }),
  route({
    method: 'POST', url: '/webchat/visitor/ping', access: visitor, operationId: 'webchat.visitor.ping',
    summary: 'The visitor is still here (the widget sends this every 30 s; offline after 60 s without)', tags,
    errors: visitorErrors, status: 204,
    schema: {},
    handler: (ctx, { request }) => visitorPing(ctx, request),
  }),
  route({
    method: 'GET', url: '/webchat/visitor/stream', access: visitor, operationId: 'webchat.visitor.stream',
    summary: 'The visitor\'s live conversation (server-sent events: message, agent_joined, ended)', tags, transaction: true,
    errors: visitorErrors,
    schema: { querystring: StreamQuery },
    stream: {
      data: VisitorStreamEvent,
      description: 'Authorization: Bearer hdv_…. Replays the conversation from its start, or after Last-Event-ID (or last_event_id), then follows it live. Heartbeat comments every 15 s.',
    },
    example: { query: { last_event_id: '0' } },
    handler: (ctx, { request, query }) => visitorStream(ctx, request, resumeOf(request, query)),
  }),

  // ---- The console ----
  route({
    method: 'GET', url: '/webchat/visitors', access: consoleRead, summary: 'Visitors online now (seen in the last 60 s)', tags,
    schema: { querystring: PageQueryOnly, response: { 200: ListOf(OnlineVisitor) } },
    handler: (ctx, { query }) => listOnlineVisitors(ctx, query),
  }),
  route({
    method: 'GET', url: '/webchat/conversations', access: consoleRead, summary: 'Conversations, newest first (?status=bot|waiting|active|ended)', tags,
    schema: { querystring: ConversationListQuery, response: { 200: ListOf(Conversation) } },
    handler: (ctx, { query }) => listConversations(ctx, query),
  }),
  route({
    method: 'GET', url: '/webchat/conversations/:id', access: consoleRead, summary: 'One conversation', tags,
    schema: { params: IdParams, response: { 200: Conversation } },
    handler: (ctx, { params }) => getConversation(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/webchat/conversations/:id/messages', access: consoleRead, summary: 'A conversation\'s lines (visitor, bot, agent), oldest first', tags,
    schema: { params: IdParams, response: { 200: ChatMessageList } },
    handler: (ctx, { params }) => listConversationMessages(ctx, params.id),
  }),
  route({
    method: 'POST', url: '/webchat/conversations/:id/reply', access: consoleWrite, summary: 'Reply (only the agent who claimed it; else 409 reply_locked)', tags,
    errors: ['conflict', 'reply_locked'],
    schema: { params: IdParams, body: ChatMessageCreate, response: { 201: ChatMessage } }, status: 201,
    example: { body: { message: 'Let me look at that for you.' } },
    handler: (ctx, { params, body }) => replyToConversation(ctx, params.id, body.message),
  }),
  route({
    method: 'POST', url: '/webchat/conversations/:id/claim', access: consoleWrite, summary: 'Claim a waiting conversation (the reply lock of chat)', tags,
    errors: ['conflict', 'reply_locked'],
    schema: { params: IdParams, response: { 200: ClaimAnswer } },
    handler: (ctx, { params }) => claimConversation(ctx, params.id),
  }),
  route({
    method: 'POST', url: '/webchat/conversations/:id/release', access: consoleWrite, summary: 'Give a claimed conversation back to the queue', tags,
    errors: ['conflict', 'reply_locked'],
    schema: { params: IdParams, response: { 200: Conversation } },
    handler: (ctx, { params }) => releaseConversation(ctx, params.id),
  }),
  route({
    method: 'POST', url: '/webchat/conversations/:id/end', access: consoleWrite, summary: 'End a conversation (its ticket is resolved; the transcript stays on it)', tags,
    errors: ['conflict', 'reply_locked'],
    schema: { params: IdParams, response: { 200: Conversation } },
    handler: (ctx, { params }) => endConversation(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/webchat/stream', access: consoleRead, operationId: 'webchat.stream',
    summary: 'The console\'s live stream (server-sent events)', tags,
    schema: { querystring: StreamQuery },
    stream: {
      data: ConsoleStreamEvent,
      description: [
        'Events: conversation.created, conversation.updated, message.created, visitor.online, visitor.offline, presence.changed;',
        'each data a JSON object with the resource. Starts with what commits next, or replays after Last-Event-ID (or last_event_id).',
        'Every daemon serves the same stream (LISTEN/NOTIFY). Heartbeat comments every 15 s; the stream ends after',
        'HELPDESK_STREAM_MAX_SECONDS and the client reconnects with Last-Event-ID.',
      ].join(' '),
    },
    example: { query: { last_event_id: '0' } },
    handler: (ctx, { request, query }) => openConsoleStream(ctx, resumeOf(request, query)),
  }),
  route({
    method: 'POST', url: '/webchat/presence', access: consoleWrite, summary: 'Presence heartbeat (offline after 60 s without one)', tags,
    errors: ['forbidden'],
    schema: { body: PresenceInput, response: { 200: Presence } },
    example: { body: { status: 'online' } },
    handler: (ctx, { body }) => heartbeat(ctx, body),
  }),
  route({
    method: 'DELETE', url: '/webchat/presence', access: consoleDelete, summary: 'Go offline now', tags,
    errors: ['forbidden'], status: 204,
    schema: {},
    handler: (ctx) => goOffline(ctx),
  }),
  route({
    method: 'GET', url: '/webchat/blocks', access: consoleRead, summary: 'Blocked visitors', tags,
    schema: { querystring: PageQueryOnly, response: { 200: ListOf(Block) } },
    handler: (ctx, { query }) => listBlocks(ctx, query),
  }),
  route({
    method: 'POST', url: '/webchat/blocks', access: consoleWrite, summary: 'Block a visitor (their calls answer 403)', tags,
    errors: ['already_exists'],
    schema: { body: BlockCreate, response: { 201: Block } }, status: 201,
    example: { body: { visitor_id: '0190f3a0-0000-7000-8000-000000000000', reason: 'Abusive language' } },
    handler: (ctx, { body }) => createBlock(ctx, body),
  }),
  route({
    method: 'DELETE', url: '/webchat/blocks/:id', access: consoleDelete, summary: 'Unblock', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteBlock(ctx, params.id),
  }),
];
