import { Type } from '@sinclair/typebox';
import { Nullable } from '../core/schema-types.js';
import { User } from '../directory/user-schemas.js';

/**
 * TypeBox schemas of the session, profile and two-factor endpoints (CONTRACT §3). Password fields
 * carry no length rule here: the policy lives in passwords.ts so its message is the same on every
 * path, and it is reported together with the service's other problems.
 */

export const CsrfAnswer = Type.Object({
  csrf_token: Type.String(),
  expires_at: Type.String({ format: 'date-time' }),
});

export const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 320 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
}, { additionalProperties: false });

export const TwoFactorLoginBody = Type.Object({
  challenge_token: Type.String({ minLength: 1, maxLength: 200 }),
  code: Type.String({ minLength: 1, maxLength: 64 }),
}, { additionalProperties: false });

export const SessionUser = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  name: Type.String(),
  role: Type.String(),
});

export const LoginAnswer = Type.Object({
  token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_at: Type.String({ format: 'date-time' }),
  user: SessionUser,
});

export const ChallengeAnswer = Type.Object({
  two_factor_required: Type.Literal(true),
  challenge_token: Type.String(),
});

export const RegisterBody = Type.Object({
  email: Type.String({ format: 'email', maxLength: 320 }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  password: Type.String(),
}, { additionalProperties: false });

export const ForgotPasswordBody = Type.Object({
  email: Type.String({ format: 'email', maxLength: 320 }),
}, { additionalProperties: false });

export const ResetPasswordBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200 }),
  new_password: Type.String(),
}, { additionalProperties: false });

/** The caller's own profile: the directory's user record, less what only staff manage. */
export const PROFILE_FIELDS = [
  'id', 'email', 'name', 'role', 'phone', 'avatar_url', 'timezone', 'locale', 'organization_id',
  'two_factor_enabled', 'last_login_at', 'created_at', 'updated_at',
] as const;
export const Profile = Type.Pick(User, PROFILE_FIELDS);

export const ProfilePatch = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  phone: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  avatar_url: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
  timezone: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  // BCP 47 language tags in their common shape: `en`, `pt-BR`, `zh-Hant-TW`.
  locale: Type.Optional(Nullable(Type.String({ maxLength: 35, pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$' }))),
}, { additionalProperties: false });

export const PasswordChangeBody = Type.Object({
  current_password: Type.String({ maxLength: 1024 }),
  new_password: Type.String(),
}, { additionalProperties: false });

export const TwoFactorStatus = Type.Object({ enabled: Type.Boolean() });

export const TwoFactorSetupAnswer = Type.Object({
  secret: Type.String(),
  otpauth_uri: Type.String(),
});

export const TwoFactorConfirmBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 64 }),
}, { additionalProperties: false });

export const TwoFactorConfirmAnswer = Type.Object({
  enabled: Type.Literal(true),
  recovery_codes: Type.Array(Type.String(), { minItems: 10, maxItems: 10 }),
});

export const TwoFactorDisableBody = Type.Object({
  password: Type.String({ maxLength: 1024 }),
}, { additionalProperties: false });

export const TwoFactorDisabledAnswer = Type.Object({ enabled: Type.Literal(false) });

export const Empty = Type.Object({});
