import { TenantModel } from '../db/model.js';

/**
 * The credential records of the foundation migration, as Objection models on the tenant-scoped
 * base (docs/architecture.md "Data access"). Tokens are stored only as SHA-256 hashes.
 */

/** A signed-in session (`hds_…`), 24 hours, revoked at logout, password reset and deactivation. */
export class SessionRecord extends TenantModel {
  static override tableName = 'sessions';
  declare user_id: string;
  declare token_hash: string;
  declare ip: string | null;
  declare user_agent: string | null;
  declare created_at: Date;
  declare expires_at: Date;
  declare last_used_at: Date | null;
  declare revoked_at: Date | null;
}

/** An API key (`hdk_<prefix>_…`); lists show only its prefix and last four characters. */
export class ApiKeyRecord extends TenantModel {
  static override tableName = 'api_keys';
  declare user_id: string;
  declare name: string;
  declare scopes: string[];
  declare prefix: string;
  declare last4: string;
  declare token_hash: string;
  declare expires_at: Date | null;
  declare last_used_at: Date | null;
  declare revoked_at: Date | null;
  declare created_at: Date;
}

/** A single-use token mailed to a user: a password reset or an invitation. */
export class UserTokenRecord extends TenantModel {
  static override tableName = 'user_tokens';
  declare user_id: string;
  declare purpose: 'password_reset' | 'invite';
  declare token_hash: string;
  declare created_at: Date;
  declare expires_at: Date;
  declare used_at: Date | null;
}

/** The second step of a sign-in for users enrolled in 2FA. */
export class LoginChallengeRecord extends TenantModel {
  static override tableName = 'login_challenges';
  declare user_id: string;
  declare token_hash: string;
  declare failed_attempts: number;
  declare created_at: Date;
  declare expires_at: Date;
  declare used_at: Date | null;
}

/** One of the ten single-use 2FA recovery codes of a user. */
export class RecoveryCodeRecord extends TenantModel {
  static override tableName = 'recovery_codes';
  declare user_id: string;
  declare code_hash: string;
  declare created_at: Date;
  declare used_at: Date | null;
}

/** One sign-in attempt, counted by the login throttle. */
export class LoginAttemptRecord extends TenantModel {
  static override tableName = 'login_attempts';
  declare email: string;
  declare ip: string | null;
  declare succeeded: boolean;
  declare created_at: Date;
}
