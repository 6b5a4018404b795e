import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp } from '../core/schema-types.js';

/**
 * The `data` of one event of the live ticket stream (GET /tickets/stream), as JSON. The spec
 * leaves the shape open; it is the timeline entry plus `seq` and `ticket_id`, with `type` the full
 * webhook event name (`ticket.status_changed`), which is also the SSE `event:` field.
 */
export const TicketStreamEvent = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The event id (the same id outbound webhooks carry)' }),
  seq: Type.Integer({ minimum: 1, description: 'Position in the stream; the SSE `id:` field, for Last-Event-ID' }),
  type: Type.String({ description: 'The webhook event name, e.g. `ticket.status_changed`' }),
  ticket_id: Nullable(Type.String({ format: 'uuid' })),
  from: Nullable(Type.String({ description: 'What changed from, as a person reads it (a status name, a collaborator)' })),
  to: Nullable(Type.String({ description: 'What it changed to' })),
  actor_id: Nullable(Type.String({ format: 'uuid', description: 'Who acted; null for the system' })),
  actor_name: Nullable(Type.String()),
  data: Type.Record(Type.String(), Type.Unknown(), { description: "The webhook payload of the spec's event table" }),
  created_at: Timestamp(),
}, { $id: 'TicketStreamEvent', additionalProperties: false });
