import { TenantModel } from '../db/model.js';

/** One row of the event store (migrations/…_event_store.ts). */
export class EventRecord extends TenantModel {
  static override tableName = 'events';

  declare seq: string | null;
  declare type: string;
  declare ticket_id: string | null;
  declare subject_type: SubjectType;
  declare subject_id: string | null;
  declare actor_id: string | null;
  declare actor_name: string | null;
  declare from_value: string | null;
  declare to_value: string | null;
  declare data: Record<string, unknown>;
  declare created_at: Date;
}

export type SubjectType = 'ticket' | 'customer' | 'organization' | 'extension' | 'tenant';
