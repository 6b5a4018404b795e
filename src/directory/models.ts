import { TenantModel } from '../db/model.js';
import type { Role } from '../core/context.js';

/**
 * The directory's records as Objection models on the tenant-scoped base (docs/architecture.md
 * "Data access"): people (staff and customers alike).
 */
export class UserRecord extends TenantModel {
  static override tableName = 'users';
  // jsonb: stringified on the way in (alternate_emails is text[] and stays a Postgres array).
  static override jsonAttributes = ['custom_fields'];
  declare email: string;
  declare name: string;
  declare role: Role;
  declare active: boolean;
  declare password_hash: string | null;
  declare phone: string | null;
  declare notes: string | null;
  declare department: string | null;
  declare alternate_emails: string[];
  declare custom_fields: Record<string, unknown>;
  declare is_vip: boolean;
  declare max_concurrent_conversations: number | null;
  declare organization_id: string | null;
  declare avatar_url: string | null;
  declare timezone: string | null;
  declare locale: string | null;
  declare two_factor_enabled: boolean;
  declare two_factor_secret_enc: string | null;
  declare two_factor_pending_secret_enc: string | null;
  /** bigint: pg hands it over as a string. */
  declare two_factor_last_step: string | number | null;
  declare invited_at: Date | null;
  declare last_login_at: Date | null;
  declare password_changed_at: Date | null;
  declare created_at: Date;
  declare updated_at: Date;
}
