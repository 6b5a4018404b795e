import { Type, type Static } from '@sinclair/typebox';
import { cursorParams } from '../core/pagination.js';
import { NonBlank, Nullable, StringEnum } from '../core/schema-types.js';
import { CHANNELS } from './models.js';
import { CUSTOM_FIELD_KEY_PATTERN } from '../vocab/schemas.js';
import { Message } from '../conversation/schemas.js';

/** Request and response schemas of /tickets (CONTRACT §5 "Ticket"). */

const SlaTargetSchema = Type.Object({
  due_at: Nullable(Type.String()),
  met_at: Nullable(Type.String()),
  breached_at: Nullable(Type.String()),
  status: StringEnum(['active', 'paused', 'met', 'breached', 'none']),
}, { $id: 'SlaTarget' });

export const TicketSlaSchema = Type.Object({
  paused: Type.Boolean(),
  first_response: SlaTargetSchema,
  next_response: SlaTargetSchema,
  resolution: SlaTargetSchema,
}, { $id: 'TicketSla' });

export const TicketSchema = Type.Object({
  id: Type.String(),
  ticket_number: Type.Integer(),
  subject: Type.String(),
  status_id: Type.String(),
  priority_id: Type.String(),
  type_id: Nullable(Type.String()),
  requester_id: Type.String(),
  assigned_agent_id: Nullable(Type.String()),
  team_id: Nullable(Type.String()),
  organization_id: Nullable(Type.String()),
  channel: StringEnum(CHANNELS),
  tags: Type.Array(Type.String()),
  custom_fields: Type.Record(Type.String(), Type.Unknown()),
  summary: Nullable(Type.String()),
  resolution_code: Nullable(Type.String()),
  sla_due_at: Nullable(Type.String()),
  sla: TicketSlaSchema,
  first_responded_at: Nullable(Type.String()),
  resolved_at: Nullable(Type.String()),
  closed_at: Nullable(Type.String()),
  snoozed_until: Nullable(Type.String()),
  merged_into_id: Nullable(Type.String()),
  /** CONTRACT §14: the latest CSAT rating, or null. */
  csat: Nullable(Type.Object({ score: Type.Integer(), comment: Nullable(Type.String()), reason: Nullable(Type.String()), submitted_at: Type.String() })),
  created_at: Type.String(),
  updated_at: Type.String(),
  /** CONTRACT §19: present (true) only on a ticket read from the archive by GET /tickets/{id}. */
  archived: Type.Optional(Type.Boolean({ description: 'true when the ticket was read from the cold archive (GET /tickets/{id} only)' })),
  /** An archived ticket's messages, from the archive (customers: public ones only). */
  messages: Type.Optional(Type.Array(Message, { description: 'An archived ticket\'s messages, read from the archive' })),
}, { $id: 'Ticket' });
export type TicketOut = Static<typeof TicketSchema>;

export const MAX_TAGS = 50;
const Tag = NonBlank({ maxLength: 100 });
const Tags = Type.Array(Tag, { maxItems: MAX_TAGS });
const Uuid = Type.String({ format: 'uuid' });
/** Custom field values by key; their kinds are checked by the service (src/vocab/custom-field-values.ts). */
const CustomFieldValues = Type.Record(Type.String({ pattern: CUSTOM_FIELD_KEY_PATTERN, maxLength: 64 }), Type.Unknown(), { maxProperties: 100 });

export const MAX_BODY = 100_000;

export const TicketCreate = Type.Object({
  subject: NonBlank({ maxLength: 500 }),
  body: NonBlank({ maxLength: MAX_BODY, description: 'The first message, plain text' }),
  body_html: Type.Optional(Type.String({ maxLength: MAX_BODY * 2, description: 'The first message as HTML; sanitised on the way in' })),
  requester_id: Type.Optional(Uuid),
  requester: Type.Optional(Type.Object({
    email: Type.String({ format: 'email', maxLength: 320 }),
    name: Type.Optional(NonBlank({ maxLength: 200 })),
  }, { additionalProperties: false, description: 'Instead of requester_id: found by email, or created as a customer' })),
  type_id: Type.Optional(Nullable(Uuid)),
  priority_id: Type.Optional(Uuid),
  team_id: Type.Optional(Nullable(Uuid)),
  assigned_agent_id: Type.Optional(Nullable(Uuid)),
  channel: Type.Optional(StringEnum(CHANNELS, { default: 'api' })),
  tags: Type.Optional(Tags),
  custom_fields: Type.Optional(CustomFieldValues),
}, {
  $id: 'TicketCreate',
  // CONTRACT §4: a top-level key equal to a custom field's key is that field's value.
  patternProperties: { [CUSTOM_FIELD_KEY_PATTERN]: Type.Unknown() },
  additionalProperties: false,
  maxProperties: 100,
});
export type TicketCreate = Static<typeof TicketCreate> & Record<string, unknown>;

export const TicketUpdate = Type.Object({
  subject: Type.Optional(NonBlank({ maxLength: 500 })),
  status_id: Type.Optional(Uuid),
  priority_id: Type.Optional(Uuid),
  type_id: Type.Optional(Nullable(Uuid)),
  assigned_agent_id: Type.Optional(Nullable(Uuid)),
  team_id: Type.Optional(Nullable(Uuid)),
  summary: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  resolution_code: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  tags: Type.Optional(Tags),
  custom_fields: Type.Optional(CustomFieldValues),
}, { $id: 'TicketUpdate', additionalProperties: false });
export type TicketUpdate = Static<typeof TicketUpdate>;

export const TICKET_SORTS = ['created_at', 'updated_at', 'sla_due_at', 'ticket_number'] as const;
export type TicketSort = (typeof TICKET_SORTS)[number];

export const TicketListQuery = Type.Object({
  ...cursorParams,
  status_id: Type.Optional(Uuid),
  priority_id: Type.Optional(Uuid),
  type_id: Type.Optional(Uuid),
  assigned_agent_id: Type.Optional(Uuid),
  team_id: Type.Optional(Uuid),
  requester_id: Type.Optional(Uuid),
  organization_id: Type.Optional(Uuid),
  channel: Type.Optional(StringEnum(CHANNELS)),
  tag: Type.Optional(Type.String({ maxLength: 100 })),
  sort_by: Type.Optional(StringEnum(TICKET_SORTS, { default: 'created_at' })),
  sort_dir: Type.Optional(StringEnum(['asc', 'desc'], { default: 'desc' })),
  conditions: Type.Optional(Type.String({ maxLength: 8000, description: 'URL-encoded JSON array of {field, operator, value} (CONTRACT §4)' })),
});
export type TicketListQuery = Static<typeof TicketListQuery>;
