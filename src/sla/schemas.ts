import { Type, type Static } from '@sinclair/typebox';
import { pageParams } from '../core/pagination.js';
import { NonBlank, Nullable, withMessage } from '../core/schema-types.js';
import { WEEKDAYS } from './calendar.js';

/** Request and response schemas of /business-hours, /sla-policies and the ticket-type overrides. */

// ---- business hours -------------------------------------------------------------------------

const OPEN_TIME = withMessage('^([01]\\d|2[0-3]):[0-5]\\d$', 'must be HH:MM between 00:00 and 23:59');
const CLOSE_TIME = withMessage('^(([01]\\d|2[0-3]):[0-5]\\d|24:00)$', 'must be HH:MM between 00:01 and 24:00');

/**
 * One day: `{open, close}` or `{is_closed: true}`. One object with optional fields rather than a
 * union, so a bad day gives one problem per bad field; the service checks the combination.
 */
const DayInput = Type.Object({
  open: Type.Optional(Type.String({ pattern: OPEN_TIME, maxLength: 5, description: 'HH:MM, 00:00–23:59' })),
  close: Type.Optional(Type.String({ pattern: CLOSE_TIME, maxLength: 5, description: 'HH:MM, up to 24:00 (end of the day)' })),
  is_closed: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

const OptionalDay = Type.Optional(DayInput);
const weekdayFields = {
  monday: OptionalDay, tuesday: OptionalDay, wednesday: OptionalDay, thursday: OptionalDay, friday: OptionalDay,
  saturday: OptionalDay, sunday: OptionalDay,
};

/** Both body shapes of CONTRACT §4: `{timezone, schedule: {monday: …}}` or `{timezone, monday: …}`. A day left out is closed. */
export const BusinessHoursInput = Type.Object({
  timezone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Berlin' }),
  schedule: Type.Optional(Type.Object(weekdayFields, { additionalProperties: false })),
  ...weekdayFields,
}, { additionalProperties: false });
export type BusinessHoursInput = Static<typeof BusinessHoursInput>;

const DayOutput = Type.Object({
  open: Type.Optional(Type.String()),
  close: Type.Optional(Type.String()),
  is_closed: Type.Optional(Type.Boolean()),
});

export const BusinessHoursSchema = Type.Object({
  timezone: Type.String(),
  schedule: Type.Object(Object.fromEntries(WEEKDAYS.map((d) => [d, DayOutput]))),
  updated_at: Nullable(Type.String({ description: 'null while the tenant uses the default' })),
}, { $id: 'BusinessHours' });
export type BusinessHoursOut = Static<typeof BusinessHoursSchema>;

// ---- holidays -------------------------------------------------------------------------------

const HolidayDateField = Type.String({ format: 'date', pattern: withMessage('^[12]\\d{3}-\\d{2}-\\d{2}$', 'must be a date YYYY-MM-DD between 1000 and 2999'), maxLength: 10, description: 'YYYY-MM-DD, a local date in the business-hours timezone' });

export const Holiday = Type.Object({
  id: Type.String(),
  name: Type.String(),
  date: Type.String(),
  recurring: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'Holiday' });
export type Holiday = Static<typeof Holiday>;

export const HolidayCreate = Type.Object({
  name: NonBlank({ maxLength: 200 }),
  date: HolidayDateField,
  recurring: Type.Optional(Type.Boolean({ default: false })),
}, { additionalProperties: false });
export type HolidayCreate = Static<typeof HolidayCreate>;

export const HolidayUpdate = Type.Object({
  name: Type.Optional(NonBlank({ maxLength: 200 })),
  date: Type.Optional(HolidayDateField),
  recurring: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });
export type HolidayUpdate = Static<typeof HolidayUpdate>;

export const HolidayListQuery = Type.Object({ ...pageParams }, { additionalProperties: false });

// ---- policies and overrides -----------------------------------------------------------------

/** A year of minutes: far beyond any sensible target, small enough to keep the arithmetic exact. */
const Minutes = Type.Integer({ minimum: 1, maximum: 525_600 });
const WarnPercent = Type.Integer({ minimum: 1, maximum: 100 });

export const SlaPolicy = Type.Object({
  priority_id: Type.String(),
  priority_key: Type.String(),
  first_response_time_minutes: Type.Integer(),
  next_response_time_minutes: Type.Integer(),
  resolution_time_minutes: Type.Integer(),
  respect_business_hours: Type.Boolean(),
  warn_percent: Type.Integer(),
  is_default: Type.Boolean({ description: 'true while the SPEC default matrix applies (never edited)' }),
  updated_at: Nullable(Type.String()),
}, { $id: 'SlaPolicy' });
export type SlaPolicy = Static<typeof SlaPolicy>;

export const SlaPolicyList = Type.Object({
  data: Type.Array(SlaPolicy),
  meta: Type.Object({ page: Type.Integer(), page_size: Type.Integer(), total: Type.Integer() }),
}, { $id: 'SlaPolicyList' });

export const SlaPolicyPatch = Type.Object({
  first_response_time_minutes: Type.Optional(Minutes),
  next_response_time_minutes: Type.Optional(Minutes),
  resolution_time_minutes: Type.Optional(Minutes),
  respect_business_hours: Type.Optional(Type.Boolean()),
  warn_percent: Type.Optional(WarnPercent),
}, { additionalProperties: false });
export type SlaPolicyPatch = Static<typeof SlaPolicyPatch>;

export const PriorityParams = Type.Object({ priorityId: Type.String({ format: 'uuid' }) });
export const TypePriorityParams = Type.Object({ typeId: Type.String({ format: 'uuid' }), priorityId: Type.String({ format: 'uuid' }) });

export const SlaOverride = Type.Object({
  type_id: Type.String(),
  priority_id: Type.String(),
  resolve_hours: Nullable(Type.Integer()),
  first_response_minutes: Nullable(Type.Integer()),
  next_response_minutes: Nullable(Type.Integer()),
  warn_percent: Nullable(Type.Integer()),
  updated_at: Type.String(),
}, { $id: 'SlaOverride' });
export type SlaOverride = Static<typeof SlaOverride>;

/** Fields sent are set; null clears one (the priority policy's value applies again). */
export const SlaOverridePatch = Type.Object({
  resolve_hours: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 8760 }))),
  first_response_minutes: Type.Optional(Nullable(Minutes)),
  next_response_minutes: Type.Optional(Nullable(Minutes)),
  warn_percent: Type.Optional(Nullable(WarnPercent)),
}, { additionalProperties: false });
export type SlaOverridePatch = Static<typeof SlaOverridePatch>;
