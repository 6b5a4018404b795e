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
  declare custom_role_id: string | null;
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

/** A customer organization; `domains` link new customers by their email domain. */
export class OrganizationRecord extends TenantModel {
  static override tableName = 'organizations';
  static override jsonAttributes = ['custom_fields'];
  declare name: string;
  declare domains: string[];
  declare website: string | null;
  declare notes: string | null;
  declare custom_fields: Record<string, unknown>;
  /** Members may see each other's tickets. */
  declare shares_tickets: boolean;
  declare created_at: Date;
  declare updated_at: Date;
}

/** A team of agents; tickets are routed to teams. */
export class TeamRecord extends TenantModel {
  static override tableName = 'teams';
  declare name: string;
  declare description: string | null;
  declare created_at: Date;
  declare updated_at: Date;
}

/** A staff user's membership of a team; leads receive the team's SLA warnings. */
export class TeamMemberRecord extends TenantModel {
  static override tableName = 'team_members';
  declare team_id: string;
  declare user_id: string;
  declare is_lead: boolean;
  declare created_at: Date;
}

/** A skill that routing rules can require of an agent. */
export class SkillRecord extends TenantModel {
  static override tableName = 'skills';
  declare name: string;
  declare description: string | null;
  declare created_at: Date;
  declare updated_at: Date;
}

/** A staff user's skill. */
export class UserSkillRecord extends TenantModel {
  static override tableName = 'user_skills';
  declare user_id: string;
  declare skill_id: string;
  declare created_at: Date;
}

/** One recorded consent answer of a customer for a channel; the newest per channel is in force. */
export class ConsentRecord extends TenantModel {
  static override tableName = 'consent_records';
  declare user_id: string;
  declare channel: string;
  declare consent_status: 'opted_in' | 'opted_out';
  declare notes: string | null;
  declare recorded_by: string | null;
  declare created_at: Date;
}
