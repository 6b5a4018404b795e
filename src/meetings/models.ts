import { TenantModel } from '../db/model.js';

export type MeetingStatus = 'active' | 'cancelled';
export type AttendeeResponse = 'needs_action' | 'accepted' | 'declined' | 'tentative';
export type VideoProvider = 'manual' | 'video_a' | 'video_b' | 'video_c';

/** A meeting; a recurring series is one row (migrations/…_meetings.ts). */
export class Meeting extends TenantModel {
  static override tableName = 'meetings';

  declare title: string;
  declare description: string | null;
  declare start_at: Date;
  declare end_at: Date;
  declare last_end_at: Date | null;
  declare timezone: string;
  declare video_provider: VideoProvider;
  declare join_url: string | null;
  /** The connector's room behind join_url (video_a/b/c). */
  declare video_room_id: string | null;
  declare ticket_id: string | null;
  declare organizer_id: string;
  declare recurrence_rule: string | null;
  declare invite_sequence: number;
  declare status: MeetingStatus;
  declare cancel_reason: string | null;
  declare created_at: Date;
  declare updated_at: Date;
}

export class MeetingAttendee extends TenantModel {
  static override tableName = 'meeting_attendees';

  declare meeting_id: string;
  declare user_id: string | null;
  declare email: string;
  declare name: string | null;
  declare response: AttendeeResponse;
  declare position: number;
}
