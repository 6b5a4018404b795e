import { STAFF, route } from '../route.js';
import { ListOf } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { addMessage, listMessages } from '../../src/conversation/messages.js';
import { addInlineImage, addMessageAttachments, openAttachment } from '../../src/conversation/attachments.js';
import { ticketTimeline } from '../../src/conversation/timeline.js';
import {
  AttachmentUploadAnswer, InlineImage, Message, MessageCreate, MessageListQuery, MessageParams, TimelineEvent, TimelineQuery,
} from '../../src/conversation/schemas.js';
import { fileReply } from '../binary.js';
import { uploadParts } from '../multipart.js';

/** A ticket's conversation, its files and its timeline (SPEC "Messages, attachments, collaborators, links, events"). */
const tags = ['conversation'];

export const conversationRoutes = [
  route({
    method: 'GET', url: '/tickets/:id/messages', access: { kind: 'token', scope: 'tickets:read' }, tags,
    summary: 'The messages of a ticket, oldest first (customers: public ones only)',
    schema: { params: IdParams, querystring: MessageListQuery, response: { 200: ListOf(Message, { cursor: true }) } },
    handler: (ctx, { params, query }) => listMessages(ctx, params.id, query),
  }),
  route({
    method: 'POST', url: '/tickets/:id/messages', access: { kind: 'token', scope: 'tickets:write' }, tags,
    summary: 'Post a public reply or a private note',
    description: 'A customer may post public messages only (`is_private: true` is 403). A closed ticket answers 409. '
      + 'A customer reply reopens a resolved ticket and moves a ticket in a status that pauses the SLA to open.',
    errors: ['forbidden', 'conflict'],
    schema: { params: IdParams, body: MessageCreate, response: { 201: Message } }, status: 201,
    example: { body: { body: 'Thanks, we are looking into it.', is_private: false } },
    handler: (ctx, { params, body }) => addMessage(ctx, params.id, body),
  }),
  route({
    method: 'POST', url: '/tickets/:id/messages/:msgId/attachments', access: { kind: 'token', scope: 'tickets:write' }, tags,
    summary: 'Upload files to a message (multipart, parts named file)',
    operationId: 'tickets.messages.attachments.create',
    errors: ['forbidden', 'conflict', 'validation_failed'],
    multipart: { field: 'file', maxFiles: 10, description: 'One or more parts named `file`; each at most HELPDESK_ATTACHMENT_MAX_BYTES (25 MB by default)' },
    schema: { params: MessageParams, response: { 201: AttachmentUploadAnswer } }, status: 201,
    handler: (ctx, { params, request }) => addMessageAttachments(ctx, params.id, params.msgId, uploadParts(request)),
  }),
  route({
    method: 'POST', url: '/inline-images', access: { kind: 'token', scope: 'tickets:write' }, tags,
    summary: 'Upload an image for the rich-text editor',
    errors: ['validation_failed'],
    multipart: { field: 'file', maxFiles: 1, description: 'One part `file` holding a PNG, JPEG, GIF, WebP, AVIF or BMP image (others: 415)' },
    schema: { response: { 201: InlineImage } }, status: 201,
    handler: (ctx, { request }) => addInlineImage(ctx, uploadParts(request)),
  }),
  route({
    method: 'GET', url: '/attachments/:id', access: { kind: 'token', scope: 'tickets:read' }, tags,
    summary: 'Download an attachment (Range supported)',
    errors: ['range_not_satisfiable'],
    binary: { description: 'The file', ranges: true },
    schema: { params: IdParams },
    handler: async (ctx, { params, request }) => fileReply(request, await openAttachment(ctx, params.id)),
  }),
  route({
    method: 'GET', url: '/attachments/:id/stream', access: { kind: 'token', scope: 'tickets:read' }, tags,
    summary: 'Stream an audio or video attachment (inline, Range supported)',
    operationId: 'attachments.stream',
    errors: ['range_not_satisfiable'],
    binary: { description: 'The file; audio and video inline, for a media element', ranges: true },
    schema: { params: IdParams },
    handler: async (ctx, { params, request }) => fileReply(request, await openAttachment(ctx, params.id), { mediaInline: true }),
  }),
  route({
    method: 'GET', url: '/tickets/:id/events', access: { kind: 'token', scope: 'tickets:read', roles: STAFF }, tags,
    summary: 'The ticket timeline: its events, oldest first (staff)',
    schema: { params: IdParams, querystring: TimelineQuery, response: { 200: ListOf(TimelineEvent, { cursor: true }) } },
    handler: (ctx, { params, query }) => ticketTimeline(ctx, params.id, query),
  }),
];
