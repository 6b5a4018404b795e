import { Type, type Static } from '@sinclair/typebox';
import { pageParams } from '../core/pagination.js';
import { NonBlank, StringEnum } from '../core/schema-types.js';

/** Request and response schemas of /webforms and the public form (CONTRACT §17). */
export const FIELD_TYPES = ['text', 'email', 'textarea'] as const;

const FieldIn = Type.Object({
  name: Type.String({ pattern: '^[a-z][a-z0-9_]{0,49}$', maxLength: 50, description: 'Lower-case letters, digits and _ ; the label shown is derived from it unless `label` is given' }),
  label: Type.Optional(NonBlank({ maxLength: 200 })),
  type: StringEnum(FIELD_TYPES),
  required: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

const FieldOut = Type.Object({ name: Type.String(), label: Type.String(), type: StringEnum(FIELD_TYPES), required: Type.Boolean() });

export const WebformOut = Type.Object({
  id: Type.String(),
  title: Type.String(),
  fields: Type.Array(FieldOut),
  public_url: Type.String({ description: 'The HTML form, at {site_url}/forms/{id}' }),
  embed_snippet: Type.String({ description: 'An <iframe> to paste into a web page' }),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'Webform' });
export type WebformOut = Static<typeof WebformOut>;

export const WebformCreate = Type.Object({
  title: NonBlank({ maxLength: 200 }),
  fields: Type.Array(FieldIn, { minItems: 1, maxItems: 30, description: 'Exactly one field of type email (the requester)' }),
}, { $id: 'WebformCreate', additionalProperties: false });
export type WebformCreate = Static<typeof WebformCreate>;

export const WebformListQuery = Type.Object({ ...pageParams });
export type WebformListQuery = Static<typeof WebformListQuery>;

/** A submission: the form's fields by name, plus `form_token` (from the page) and the honeypot `homepage` (must stay empty). */
export const WebformSubmission = Type.Record(Type.String({ maxLength: 50 }), Type.String({ maxLength: 20_000 }), { maxProperties: 40 });
export type WebformSubmission = Static<typeof WebformSubmission>;

export const WebformSubmitted = Type.Object({ ticket_id: Type.String(), ticket_number: Type.Integer() }, { $id: 'WebformSubmitted' });
export type WebformSubmitted = Static<typeof WebformSubmitted>;

export const WebformToken = Type.Object({ form_token: Type.String() }, { $id: 'WebformToken' });
