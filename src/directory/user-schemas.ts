import { Type, type Static } from '@sinclair/typebox';
import { ROLES } from '../core/context.js';
import { pageParams } from '../core/pagination.js';
import { HttpUrl, NonBlank, Nullable, StringEnum } from '../core/schema-types.js';
import { NewPassword } from '../auth/password-schema.js';
import { CustomFieldValues } from './custom-fields.js';

/** Request and response schemas of /users (validation, serialisation, OpenAPI, the REST client). */
export const RoleSchema = StringEnum(ROLES);

export const User = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: RoleSchema,
  /** The custom role the user holds (RBAC module), else null; such a user's `role` is `agent`. */
  custom_role_id: Nullable(Type.String()),
  active: Type.Boolean(),
  phone: Nullable(Type.String()),
  notes: Nullable(Type.String()),
  department: Nullable(Type.String()),
  alternate_emails: Type.Array(Type.String()),
  custom_fields: Type.Record(Type.String(), Type.Unknown()),
  is_vip: Type.Boolean(),
  max_concurrent_conversations: Nullable(Type.Integer()),
  organization_id: Nullable(Type.String()),
  avatar_url: Nullable(Type.String()),
  timezone: Nullable(Type.String()),
  locale: Nullable(Type.String()),
  two_factor_enabled: Type.Boolean(),
  invited_at: Nullable(Type.String()),
  last_login_at: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'User' });
export type User = Static<typeof User>;

/** Profile fields shared by create, update and the caller's own profile; nullable ones are cleared with null. */
export const profileFields = {
  phone: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  department: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  alternate_emails: Type.Optional(Type.Array(Type.String({ format: 'email', maxLength: 320 }), { maxItems: 20 })),
  custom_fields: Type.Optional(CustomFieldValues),
  is_vip: Type.Optional(Type.Boolean()),
  max_concurrent_conversations: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 1000 }))),
  organization_id: Type.Optional(Nullable(Type.String({ format: 'uuid' }))),
  avatar_url: Type.Optional(Nullable(HttpUrl({ maxLength: 2000 }))),
  // IANA zone names are checked by the service (luxon knows the zone database; no pattern can).
  // BCP 47 language tags in their common shape: `en`, `pt-BR`, `zh-Hant-TW`.
  timezone: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
  locale: Type.Optional(Nullable(Type.String({ pattern: '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$', maxLength: 35 }))),
};

/** A person's name: something besides white space. */
export const UserName = NonBlank({ maxLength: 200 });
const name = UserName;
const email = Type.String({ format: 'email', maxLength: 320 });

export const UserCreate = Type.Object(
  {
    email,
    name,
    role: Type.Optional(RoleSchema),
    password: Type.Optional(NewPassword),
    ...profileFields,
  },
  { $id: 'UserCreate', additionalProperties: false },
);
export type UserCreate = Static<typeof UserCreate>;

export const UserUpdate = Type.Object(
  { name: Type.Optional(name), email: Type.Optional(email), active: Type.Optional(Type.Boolean()), ...profileFields },
  { $id: 'UserUpdate', additionalProperties: false },
);
export type UserUpdate = Static<typeof UserUpdate>;

/** A system role (`admin`, `agent`, `customer`) or a custom role's name (RBAC module). */
export const RoleChange = Type.Object({
  role: NonBlank({ maxLength: 64, description: 'admin, agent, customer, or the name of a custom role' }),
}, { $id: 'RoleChange', additionalProperties: false });

export const UserListQuery = Type.Object({
  ...pageParams,
  role: Type.Optional(RoleSchema),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring of the name, the email or an alternate email' })),
  active: Type.Optional(Type.Boolean()),
  is_vip: Type.Optional(Type.Boolean()),
  organization_id: Type.Optional(Type.String({ format: 'uuid' })),
  sort_by: Type.Optional(StringEnum(['created_at', 'name', 'email'], { default: 'created_at' })),
  sort_dir: Type.Optional(StringEnum(['asc', 'desc'], { default: 'asc' })),
});
export type UserListQuery = Static<typeof UserListQuery>;

export const Invitation = Type.Object({ user_id: Type.String(), invited_at: Type.String(), expires_at: Type.String() }, { $id: 'Invitation' });
export type Invitation = Static<typeof Invitation>;

export const SeatUsageSchema = Type.Object({
  used: Type.Integer(),
  licensed: Nullable(Type.Integer()),
  quota: Nullable(Type.Integer()),
  limit: Nullable(Type.Integer()),
  available: Nullable(Type.Integer()),
}, { $id: 'SeatUsage' });

export const SeatQuota = Type.Object({ quota: Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000 })) }, { $id: 'SeatQuota', additionalProperties: false });
