import { Type, type Static } from '@sinclair/typebox';
import { cursorParams } from '../core/pagination.js';
import { NonBlank, Nullable, StringEnum } from '../core/schema-types.js';
import { CHANNELS } from '../tickets/models.js';

/** Request and response schemas of a ticket's conversation, its attachments and its timeline. */

export const AttachmentSummary = Type.Object({
  id: Type.String(),
  filename: Type.String(),
  content_type: Type.String(),
  size: Type.Integer(),
}, { $id: 'AttachmentSummary' });
export type AttachmentSummary = Static<typeof AttachmentSummary>;

export const Message = Type.Object({
  id: Type.String(),
  ticket_id: Type.String(),
  body: Type.String(),
  body_html: Nullable(Type.String()),
  is_private: Type.Boolean(),
  author_id: Nullable(Type.String()),
  author_name: Type.String(),
  is_agent: Type.Boolean(),
  channel: StringEnum(CHANNELS),
  attachments: Type.Array(AttachmentSummary),
  // Nullable (type: [object, null]) rather than an anyOf: an anyOf inside Message, which the Ticket
  // schema embeds, makes the response serializer clone the Ticket schema and see its $id'd parts twice.
  delivery: Nullable(Type.Object({
    status: StringEnum(['pending', 'sent', 'failed'] as const),
    error: Nullable(Type.String()),
    external_id: Nullable(Type.String()),
  }, { description: 'Outbound delivery on a messaging or social channel (pending, sent, failed); null on channels without delivery' })),
  created_at: Type.String(),
}, { $id: 'Message' });
export type Message = Static<typeof Message>;

/** Bounds: a message is text a person wrote; 1 MiB bodies (the request limit) hold either. */
export const MESSAGE_BODY_MAX = 100_000;
export const MESSAGE_HTML_MAX = 400_000;

export const MessageCreate = Type.Object({
  body: Type.Optional(NonBlank({ maxLength: MESSAGE_BODY_MAX, description: 'Plain text; derived from body_html when only that is sent' })),
  body_html: Type.Optional(Type.String({ maxLength: MESSAGE_HTML_MAX, description: 'HTML; sanitised before it is stored' })),
  is_private: Type.Optional(Type.Boolean({ description: 'An internal note, visible to staff only (staff only: a customer sending true is 403)' })),
}, { $id: 'MessageCreate', additionalProperties: false });
export type MessageCreate = Static<typeof MessageCreate>;

export const MessageListQuery = Type.Object({ ...cursorParams });
export type MessageListQuery = Static<typeof MessageListQuery>;

export const AttachmentUploadAnswer = Type.Object({ data: Type.Array(AttachmentSummary) }, { $id: 'AttachmentUploadAnswer' });
export type AttachmentUploadAnswer = Static<typeof AttachmentUploadAnswer>;

export const InlineImage = Type.Object({ id: Type.String(), url: Type.String() }, { $id: 'InlineImage' });
export type InlineImage = Static<typeof InlineImage>;

export const MessageParams = Type.Object({ id: Type.String({ format: 'uuid' }), msgId: Type.String({ format: 'uuid' }) });

export const TimelineEvent = Type.Object({
  id: Type.String(),
  type: Type.String({ description: "The webhook event name without the 'ticket.' prefix, or a system note" }),
  from: Nullable(Type.String()),
  to: Nullable(Type.String()),
  actor_id: Nullable(Type.String()),
  actor_name: Nullable(Type.String()),
  data: Type.Record(Type.String(), Type.Unknown()),
  created_at: Type.String(),
}, { $id: 'TimelineEvent' });
export type TimelineEvent = Static<typeof TimelineEvent>;

export const TimelineQuery = Type.Object({ ...cursorParams });
export type TimelineQuery = Static<typeof TimelineQuery>;
