import { Type, type Static } from '@sinclair/typebox';
import { NonBlank, Nullable, StringEnum } from '../core/schema-types.js';
import { CUSTOM_FIELD_KINDS, STATUS_CATEGORIES } from './models.js';

/** Request and response schemas of /meta/statuses, /meta/priorities, /ticket-types, /custom-fields. */

const position = Type.Integer({ minimum: 0, maximum: 10_000 });

export const StatusSchema = Type.Object({
  id: Type.String(),
  key: Type.String(),
  name: Type.String(),
  category: StringEnum(STATUS_CATEGORIES),
  pauses_sla: Type.Boolean(),
  position: Type.Integer(),
}, { $id: 'Status' });
export type StatusOut = Static<typeof StatusSchema>;

export const StatusUpdate = Type.Object({
  name: Type.Optional(NonBlank({ maxLength: 100 })),
  pauses_sla: Type.Optional(Type.Boolean()),
  position: Type.Optional(position),
}, { $id: 'StatusUpdate', additionalProperties: false });
export type StatusUpdate = Static<typeof StatusUpdate>;

export const PrioritySchema = Type.Object({
  id: Type.String(),
  key: Type.String(),
  name: Type.String(),
  position: Type.Integer(),
}, { $id: 'Priority' });
export type PriorityOut = Static<typeof PrioritySchema>;

export const TicketTypeSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  active: Type.Boolean(),
  position: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'TicketType' });
export type TicketTypeOut = Static<typeof TicketTypeSchema>;

const typeFields = {
  description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  active: Type.Optional(Type.Boolean()),
  position: Type.Optional(position),
};

export const TicketTypeCreate = Type.Object(
  { name: NonBlank({ maxLength: 100 }), ...typeFields },
  { $id: 'TicketTypeCreate', additionalProperties: false },
);
export type TicketTypeCreate = Static<typeof TicketTypeCreate>;

export const TicketTypeUpdate = Type.Object(
  { name: Type.Optional(NonBlank({ maxLength: 100 })), ...typeFields },
  { $id: 'TicketTypeUpdate', additionalProperties: false },
);
export type TicketTypeUpdate = Static<typeof TicketTypeUpdate>;

export const CustomFieldSchema = Type.Object({
  id: Type.String(),
  key: Type.String(),
  label: Type.String(),
  kind: StringEnum(CUSTOM_FIELD_KINDS),
  options: Type.Array(Type.String()),
  required: Type.Boolean(),
  active: Type.Boolean(),
  position: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'CustomField' });
export type CustomFieldOut = Static<typeof CustomFieldSchema>;

export const CUSTOM_FIELD_KEY_PATTERN = '^[a-z][a-z0-9_]{0,63}$';
export const MAX_OPTIONS = 200;

const fieldOptions = Type.Array(NonBlank({ maxLength: 200 }), { maxItems: MAX_OPTIONS });
const fieldCommon = {
  required: Type.Optional(Type.Boolean()),
  active: Type.Optional(Type.Boolean()),
  position: Type.Optional(position),
};

export const CustomFieldCreate = Type.Object({
  key: Type.String({ pattern: CUSTOM_FIELD_KEY_PATTERN, maxLength: 64, description: 'Lowercase letters, digits and _; fixed once created' }),
  label: NonBlank({ maxLength: 200 }),
  kind: StringEnum(CUSTOM_FIELD_KINDS, { description: 'Fixed once created: stored values are of this kind' }),
  options: Type.Optional(fieldOptions),
  ...fieldCommon,
}, { $id: 'CustomFieldCreate', additionalProperties: false });
export type CustomFieldCreate = Static<typeof CustomFieldCreate>;

export const CustomFieldUpdate = Type.Object({
  label: Type.Optional(NonBlank({ maxLength: 200 })),
  options: Type.Optional(fieldOptions),
  ...fieldCommon,
}, { $id: 'CustomFieldUpdate', additionalProperties: false });
export type CustomFieldUpdate = Static<typeof CustomFieldUpdate>;
