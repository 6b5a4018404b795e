import { Type, type Static } from '@sinclair/typebox';
import { cursorParams } from '../core/pagination.js';
import { HttpUrl, NonBlank, Nullable, StringEnum } from '../core/schema-types.js';
import { EVENT_TYPES } from '../events/types.js';

/** Request and response schemas of /webhook-endpoints (SPEC "Webhook endpoint", CONTRACT §5–6). */
export const MAX_HEADERS = 20;

// A name listed twice is taken once (the service de-duplicates), as a subscription is a set.
const EventList = Type.Array(StringEnum(EVENT_TYPES), { minItems: 1, maxItems: 2 * EVENT_TYPES.length });
// Header names are checked by the service (token characters, none of ours), naming the header.
const StaticHeaders = Type.Record(Type.String(), Type.String({ maxLength: 1000 }), { maxProperties: MAX_HEADERS });

export const WebhookEndpointOut = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  headers: Type.Record(Type.String(), Type.String()),
  active: Type.Boolean(),
  secret: Type.String({ description: 'whsec_ + 64 hex characters in the create and rotate answers; whsec_******** + the last four characters elsewhere' }),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'WebhookEndpoint' });
export type WebhookEndpointOut = Static<typeof WebhookEndpointOut>;

export const WebhookEndpointCreate = Type.Object({
  name: NonBlank({ maxLength: 200 }),
  url: HttpUrl({ maxLength: 2000 }),
  events: EventList,
  headers: Type.Optional(StaticHeaders),
  active: Type.Optional(Type.Boolean()),
}, { $id: 'WebhookEndpointCreate', additionalProperties: false });
export type WebhookEndpointCreate = Static<typeof WebhookEndpointCreate>;

export const WebhookEndpointUpdate = Type.Object({
  name: Type.Optional(NonBlank({ maxLength: 200 })),
  url: Type.Optional(HttpUrl({ maxLength: 2000 })),
  events: Type.Optional(EventList),
  headers: Type.Optional(StaticHeaders),
  active: Type.Optional(Type.Boolean()),
}, { $id: 'WebhookEndpointUpdate', additionalProperties: false });
export type WebhookEndpointUpdate = Static<typeof WebhookEndpointUpdate>;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'dead'] as const;

export const DeliveryOut = Type.Object({
  delivery_id: Type.String(),
  endpoint_id: Type.String(),
  event_id: Type.String(),
  event: Type.String(),
  status: StringEnum(DELIVERY_STATUSES),
  attempt: Type.Integer({ description: 'Attempts made so far; a manual retry starts again at 0' }),
  attempt_id: Nullable(Type.String({ description: 'The X-Helpdesk-Delivery-Id of the latest attempt' })),
  status_code: Nullable(Type.Integer()),
  latency_ms: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  next_attempt_at: Nullable(Type.String()),
  created_at: Type.String(),
  delivered_at: Nullable(Type.String()),
}, { $id: 'WebhookDelivery' });
export type DeliveryOut = Static<typeof DeliveryOut>;

export const DeliveryListQuery = Type.Object({ ...cursorParams, status: Type.Optional(StringEnum(DELIVERY_STATUSES)) });
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;

export const DeliveryParams = Type.Object({ id: Type.String({ format: 'uuid' }), deliveryId: Type.String({ format: 'uuid' }) });

export const BulkRetry = Type.Object({
  status: StringEnum(['failed', 'dead'] as const, { description: 'Which deliveries of the endpoint go back to pending' }),
}, { $id: 'WebhookBulkRetry', additionalProperties: false });
export type BulkRetry = Static<typeof BulkRetry>;

export const RetryResult = Type.Object({
  retried: Type.Integer(),
  delivery_ids: Type.Array(Type.String()),
}, { $id: 'WebhookRetryResult' });
export type RetryResult = Static<typeof RetryResult>;

export const PingResult = Type.Object({
  delivered: Type.Boolean(),
  status_code: Nullable(Type.Integer()),
  latency_ms: Type.Integer(),
  error: Nullable(Type.String()),
}, { $id: 'WebhookPingResult' });
export type PingResult = Static<typeof PingResult>;
