import { Type } from '@sinclair/typebox';
import { profileFields, User, UserName } from '../directory/user-schemas.js';
import { NewPassword } from './password-schema.js';
import { NotificationPreferences, NotificationPreferencesPatch } from '../push/schemas.js';

/**
 * TypeBox schemas of the session, profile and two-factor endpoints (CONTRACT §3). A new password
 * states the policy (`NewPassword`, at least 12 characters); a password being checked (login,
 * current password) only has a sane bound.
 */

export const CsrfAnswer = Type.Object({
  csrf_token: Type.String(),
  expires_at: Type.String({ format: 'date-time' }),
}, { $id: 'CsrfAnswer' });

export const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 320 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
}, { $id: 'LoginBody', additionalProperties: false });

export const TwoFactorLoginBody = Type.Object({
  challenge_token: Type.String({ minLength: 1, maxLength: 200 }),
  code: Type.String({ minLength: 1, maxLength: 64 }),
}, { $id: 'TwoFactorLoginBody', additionalProperties: false });

export const SessionUser = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  name: Type.String(),
  role: Type.String(),
}, { $id: 'SessionUser' });

export const LoginAnswer = Type.Object({
  token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_at: Type.String({ format: 'date-time' }),
  user: SessionUser,
}, { $id: 'LoginAnswer' });

export const ChallengeAnswer = Type.Object({
  two_factor_required: Type.Literal(true),
  challenge_token: Type.String(),
}, { $id: 'ChallengeAnswer' });

export const RegisterBody = Type.Object({
  email: Type.String({ format: 'email', maxLength: 320 }),
  name: UserName,
  password: NewPassword,
}, { $id: 'RegisterBody', additionalProperties: false });

export const ForgotPasswordBody = Type.Object({
  email: Type.String({ format: 'email', maxLength: 320 }),
}, { $id: 'ForgotPasswordBody', additionalProperties: false });

export const ResetPasswordBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200 }),
  new_password: NewPassword,
}, { $id: 'ResetPasswordBody', additionalProperties: false });

/** The caller's own profile: the directory's user record, less what only staff manage. */
export const PROFILE_FIELDS = [
  'id', 'email', 'name', 'role', 'phone', 'avatar_url', 'timezone', 'locale', 'organization_id',
  'two_factor_enabled', 'last_login_at', 'created_at', 'updated_at',
] as const;
// notification_preferences: mail and push switches and the active window (CONTRACT §14).
export const Profile = Type.Composite([
  Type.Pick(User, PROFILE_FIELDS),
  Type.Object({ notification_preferences: NotificationPreferences }),
], { $id: 'Profile' });

export const ProfilePatch = Type.Object({
  // The same field rules as the staff directory's (user-schemas.ts).
  name: Type.Optional(UserName),
  phone: profileFields.phone,
  avatar_url: profileFields.avatar_url,
  timezone: profileFields.timezone,
  locale: profileFields.locale,
  notification_preferences: Type.Optional(NotificationPreferencesPatch),
}, { $id: 'ProfilePatch', additionalProperties: false });

export const PasswordChangeBody = Type.Object({
  current_password: Type.String({ maxLength: 1024 }),
  new_password: NewPassword,
}, { $id: 'PasswordChangeBody', additionalProperties: false });

export const TwoFactorStatus = Type.Object({ enabled: Type.Boolean() }, { $id: 'TwoFactorStatus' });

export const TwoFactorSetupAnswer = Type.Object({
  secret: Type.String(),
  otpauth_uri: Type.String(),
}, { $id: 'TwoFactorSetupAnswer' });

export const TwoFactorConfirmBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 64 }),
}, { $id: 'TwoFactorConfirmBody', additionalProperties: false });

export const TwoFactorConfirmAnswer = Type.Object({
  enabled: Type.Literal(true),
  recovery_codes: Type.Array(Type.String(), { minItems: 10, maxItems: 10 }),
}, { $id: 'TwoFactorConfirmAnswer' });

export const TwoFactorDisableBody = Type.Object({
  password: Type.String({ maxLength: 1024 }),
}, { $id: 'TwoFactorDisableBody', additionalProperties: false });

export const TwoFactorDisabledAnswer = Type.Object({ enabled: Type.Literal(false) }, { $id: 'TwoFactorDisabledAnswer' });

export const Empty = Type.Object({});
