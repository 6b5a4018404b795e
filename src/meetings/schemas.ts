import { Type, type Static } from '@sinclair/typebox';
import { HttpUrl, NonBlank, Nullable, Timestamp } from '../core/schema-types.js';
import { pageParams } from '../core/pagination.js';

/** Meeting shapes (SPEC "Meeting", CONTRACT §4 and §7). Input takes both spellings; output the canonical. */
const Provider = Type.Union([Type.Literal('manual'), Type.Literal('video_a'), Type.Literal('video_b'), Type.Literal('video_c')]);

export const AttendeeIn = Type.Union([
  Type.Object({ user_id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
  Type.Object({
    email: Type.String({ format: 'email', maxLength: 254 }),
    name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  }, { additionalProperties: false }),
]);
export type AttendeeIn = Static<typeof AttendeeIn>;

const meetingFields = {
  description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  start_at: Type.Optional(Nullable(Timestamp({ maxLength: 40 }))),
  starts_at: Type.Optional(Nullable(Timestamp({ maxLength: 40 }))),
  end_at: Type.Optional(Nullable(Timestamp({ maxLength: 40 }))),
  ends_at: Type.Optional(Nullable(Timestamp({ maxLength: 40 }))),
  video_provider: Type.Optional(Type.Union([Provider, Type.Null()])),
  provider: Type.Optional(Type.Union([Provider, Type.Null()])),
  join_url: Type.Optional(Nullable(HttpUrl({ maxLength: 2000 }))),
  ticket_id: Type.Optional(Nullable(Type.String({ format: 'uuid' }))),
  attendees: Type.Optional(Type.Union([Type.Array(AttendeeIn, { maxItems: 100 }), Type.Null()])),
  recurrence_rule: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  timezone: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
};

/** POST and PUT: the whole meeting (PUT clears what is absent or null). */
export const MeetingCreate = Type.Object({ title: NonBlank({ maxLength: 300 }), ...meetingFields }, { $id: 'MeetingCreate', additionalProperties: false });
/** PATCH: only the fields sent change. */
export const MeetingPatch = Type.Object({ title: Type.Optional(NonBlank({ maxLength: 300 })), ...meetingFields }, { $id: 'MeetingPatch', additionalProperties: false });
export type MeetingInput = Static<typeof MeetingPatch>;

export const MeetingCancel = Type.Object({
  reason: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
}, { $id: 'MeetingCancel', additionalProperties: false });
export type MeetingCancel = Static<typeof MeetingCancel>;

export const AttendeeOut = Type.Object({
  id: Type.String(),
  user_id: Type.Union([Type.String(), Type.Null()]),
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  response: Type.Union([Type.Literal('needs_action'), Type.Literal('accepted'), Type.Literal('declined'), Type.Literal('tentative')]),
}, { $id: 'MeetingAttendee' });
export type AttendeeOut = Static<typeof AttendeeOut>;

export const MeetingOut = Type.Object({
  id: Type.String(),
  title: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  start_at: Type.String(),
  end_at: Type.String(),
  timezone: Type.String(),
  video_provider: Provider,
  join_url: Type.Union([Type.String(), Type.Null()]),
  ticket_id: Type.Union([Type.String(), Type.Null()]),
  organizer_id: Type.String(),
  attendees: Type.Array(AttendeeOut),
  recurrence_rule: Type.Union([Type.String(), Type.Null()]),
  invite_sequence: Type.Integer(),
  status: Type.Union([Type.Literal('active'), Type.Literal('cancelled')]),
  cancel_reason: Type.Union([Type.String(), Type.Null()]),
  ical_uid: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'Meeting' });
export type MeetingOut = Static<typeof MeetingOut>;

export const MeetingListQuery = Type.Object({
  ...pageParams,
  ticket_id: Type.Optional(Type.String({ format: 'uuid' })),
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('cancelled')])),
});
export type MeetingListQuery = Static<typeof MeetingListQuery>;

export const AvailabilityQuery = Type.Object({
  from: Timestamp({ maxLength: 40 }),
  to: Timestamp({ maxLength: 40 }),
  attendee_ids: Type.String({
    pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(,[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}){0,49}$',
    maxLength: 1900, description: 'Comma-separated user ids (at most 50)',
  }),
  exclude_meeting_id: Type.Optional(Type.String({ format: 'uuid' })),
});
export type AvailabilityQuery = Static<typeof AvailabilityQuery>;

export const Availability = Type.Object({
  conflicts: Type.Array(Type.Object({
    user_id: Type.String(),
    user_name: Type.String(),
    busy_ranges: Type.Array(Type.Object({ start_at: Type.String(), end_at: Type.String(), source: Type.String() })),
  })),
}, { $id: 'MeetingAvailability' });
export type Availability = Static<typeof Availability>;

export const FeedToken = Type.Object({ feed_token: Type.String(), feed_url: Type.String() }, { $id: 'MeetingFeedToken' });
export type FeedToken = Static<typeof FeedToken>;

export const FeedParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
