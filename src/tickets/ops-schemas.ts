import { Type, type Static } from '@sinclair/typebox';
import { NonBlank, Nullable, Timestamp } from '../core/schema-types.js';

/** Request and response schemas of the ticket operations (docs/api.md "Ticket operations"). */

const Uuid = Type.String({ format: 'uuid' });
const Email = Type.String({ format: 'email', maxLength: 320 });

// Path parameters of the sub-resources (a malformed id answers 404, as everywhere).
export const TicketLinkParams = Type.Object({ id: Uuid, linkId: Uuid });
export const TicketCollaboratorParams = Type.Object({ id: Uuid, userId: Uuid });
export const EntryParams = Type.Object({ entryId: Uuid });

// Snooze -------------------------------------------------------------------------------------

export const SnoozeInput = Type.Object({
  until: Timestamp({ maxLength: 40, description: 'RFC 3339; later than now and at most a year ahead' }),
}, { $id: 'SnoozeInput', additionalProperties: false });
export type SnoozeInput = Static<typeof SnoozeInput>;

// Merge --------------------------------------------------------------------------------------

export const MergeInput = Type.Object({
  target_ticket_id: Uuid,
  reason: Type.Optional(Type.String({ maxLength: 2000 })),
}, { $id: 'MergeInput', additionalProperties: false });
export type MergeInput = Static<typeof MergeInput>;

export const MergeResult = Type.Object({
  ticket_id: Type.String({ description: 'The source ticket, now closed' }),
  merged_into_id: Type.String(),
  status_id: Type.String(),
  closed_at: Type.String(),
  note_id: Type.String({ description: "The private note added to the target's conversation" }),
}, { $id: 'MergeResult' });
export type MergeResult = Static<typeof MergeResult>;

// Links --------------------------------------------------------------------------------------

export const LinkInput = Type.Object({ target_ticket_id: Uuid }, { $id: 'LinkInput', additionalProperties: false });
export type LinkInput = Static<typeof LinkInput>;

export const TicketLink = Type.Object({
  id: Type.String(),
  ticket_id: Type.String({ description: 'The ticket of the path' }),
  linked_ticket: Type.Object({
    id: Type.String(),
    ticket_number: Type.Integer(),
    subject: Type.String(),
    status_id: Type.String(),
  }),
  created_by: Nullable(Type.String()),
  created_at: Type.String(),
}, { $id: 'TicketLink' });
export type TicketLink = Static<typeof TicketLink>;

// Collaborators ------------------------------------------------------------------------------

export const CollaboratorInput = Type.Object({
  user_id: Type.Optional(Uuid),
  email: Type.Optional(Email),
  name: Type.Optional(NonBlank({ maxLength: 200 })),
}, { $id: 'CollaboratorInput', additionalProperties: false, description: 'Either user_id, or email with an optional name' });
export type CollaboratorInput = Static<typeof CollaboratorInput>;

export const Collaborator = Type.Object({
  id: Type.String({ description: 'The collaborator id; a bare-email collaborator is removed by it' }),
  ticket_id: Type.String(),
  user_id: Nullable(Type.String()),
  email: Type.String(),
  name: Nullable(Type.String()),
  created_at: Type.String(),
}, { $id: 'Collaborator' });
export type Collaborator = Static<typeof Collaborator>;

// Reply lock ---------------------------------------------------------------------------------

export const ReplyLock = Type.Object({
  ticket_id: Type.String(),
  locked_by: Type.Object({ id: Type.String(), name: Type.String() }),
  expires_at: Type.String(),
}, { $id: 'ReplyLock' });
export type ReplyLock = Static<typeof ReplyLock>;

// Time entries -------------------------------------------------------------------------------

const WorkDate = Type.String({ format: 'date', maxLength: 10, description: 'YYYY-MM-DD; default: today (UTC); not in the future' });
const Minutes = Type.Integer({ minimum: 1, maximum: 1440, description: 'Whole minutes, 1 to 1440 (one day)' });
const Description = Nullable(Type.String({ maxLength: 2000 }));

export const TimeEntryCreate = Type.Object({
  minutes: Minutes,
  description: Type.Optional(Description),
  billable: Type.Optional(Type.Boolean({ description: 'default true' })),
  work_date: Type.Optional(WorkDate),
}, { $id: 'TimeEntryCreate', additionalProperties: false });
export type TimeEntryCreate = Static<typeof TimeEntryCreate>;

export const TimeEntryUpdate = Type.Object({
  minutes: Type.Optional(Minutes),
  description: Type.Optional(Description),
  billable: Type.Optional(Type.Boolean()),
  work_date: Type.Optional(WorkDate),
}, { $id: 'TimeEntryUpdate', additionalProperties: false });
export type TimeEntryUpdate = Static<typeof TimeEntryUpdate>;

export const TimeEntry = Type.Object({
  id: Type.String(),
  ticket_id: Type.String(),
  user_id: Type.String(),
  user_name: Type.String(),
  minutes: Type.Integer(),
  description: Nullable(Type.String()),
  billable: Type.Boolean(),
  work_date: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'TimeEntry' });
export type TimeEntry = Static<typeof TimeEntry>;
