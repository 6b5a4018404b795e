import { TenantModel } from '../db/model.js';

/** One row of the append-only audit trail (a trigger refuses UPDATE, DELETE and TRUNCATE). */
export class AuditRecord extends TenantModel {
  static override tableName = 'audit_log';
  // jsonb: stringified on the way in, so an array of changes is never sent as a Postgres array.
  static override jsonAttributes = ['changes'];
  declare actor_type: 'user' | 'api_key' | 'system' | 'cli';
  declare actor_id: string | null;
  declare actor_name: string | null;
  declare action: string;
  declare resource_type: string;
  declare resource_id: string | null;
  declare changes: Record<string, unknown>;
  declare ip: string | null;
  declare request_id: string | null;
  declare created_at: Date;
}
