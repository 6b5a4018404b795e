import { Type, type Static } from '@sinclair/typebox';
import { pageParams } from '../core/pagination.js';
import { HttpUrl, NonBlank, Nullable, StringEnum } from '../core/schema-types.js';
import { CustomFieldValues } from './custom-fields.js';

/** Request and response schemas of organizations, teams, skills and consent. */

// A domain name as people type it after the @: labels of letters, digits and hyphens.
const Domain = Type.String({
  pattern: '^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$',
  maxLength: 253,
});

export const Organization = Type.Object({
  id: Type.String(),
  name: Type.String(),
  domains: Type.Array(Type.String()),
  website: Nullable(Type.String()),
  notes: Nullable(Type.String()),
  custom_fields: Type.Record(Type.String(), Type.Unknown()),
  shares_tickets: Type.Boolean({ description: "Members may see each other's tickets" }),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'Organization' });
export type Organization = Static<typeof Organization>;

const organizationFields = {
  domains: Type.Optional(Type.Array(Domain, { maxItems: 50 })),
  website: Type.Optional(Nullable(HttpUrl({ maxLength: 2000 }))),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  custom_fields: Type.Optional(CustomFieldValues),
  shares_tickets: Type.Optional(Type.Boolean()),
};

export const OrganizationCreate = Type.Object(
  { name: NonBlank({ maxLength: 200 }), ...organizationFields },
  { $id: 'OrganizationCreate', additionalProperties: false },
);
export type OrganizationCreate = Static<typeof OrganizationCreate>;

export const OrganizationUpdate = Type.Object(
  { name: Type.Optional(NonBlank({ maxLength: 200 })), ...organizationFields },
  { $id: 'OrganizationUpdate', additionalProperties: false },
);
export type OrganizationUpdate = Static<typeof OrganizationUpdate>;

export const OrganizationListQuery = Type.Object({
  ...pageParams,
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring of the name, or a domain' })),
});
export type OrganizationListQuery = Static<typeof OrganizationListQuery>;

export const FilterValuesQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive prefix of a word of the name' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 20 })),
});
export type FilterValuesQuery = Static<typeof FilterValuesQuery>;

export const FilterValues = Type.Object({
  data: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
}, { $id: 'OrganizationFilterValues' });

export const OrganizationLink = Type.Object(
  { organization_id: Nullable(Type.String({ format: 'uuid' })) },
  { $id: 'OrganizationLink', additionalProperties: false },
);

export const Team = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'Team' });
export type Team = Static<typeof Team>;

export const TeamCreate = Type.Object(
  { name: NonBlank({ maxLength: 200 }), description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))) },
  { $id: 'TeamCreate', additionalProperties: false },
);
export type TeamCreate = Static<typeof TeamCreate>;

export const TeamUpdate = Type.Object(
  { name: Type.Optional(NonBlank({ maxLength: 200 })), description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))) },
  { $id: 'TeamUpdate', additionalProperties: false },
);
export type TeamUpdate = Static<typeof TeamUpdate>;

export const TeamMember = Type.Object({
  user_id: Type.String(),
  name: Type.String(),
  email: Type.String(),
  is_lead: Type.Boolean(),
}, { $id: 'TeamMember' });
export type TeamMember = Static<typeof TeamMember>;

export const TeamMemberAdd = Type.Object(
  { user_id: Type.String({ format: 'uuid' }), is_lead: Type.Optional(Type.Boolean({ default: false })) },
  { $id: 'TeamMemberAdd', additionalProperties: false },
);
export const TeamMemberUpdate = Type.Object({ is_lead: Type.Boolean() }, { $id: 'TeamMemberUpdate', additionalProperties: false });
export const TeamMemberParams = Type.Object({ id: Type.String({ format: 'uuid' }), userId: Type.String({ format: 'uuid' }) });

export const Skill = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'Skill' });
export type Skill = Static<typeof Skill>;

export const SkillCreate = Type.Object(
  { name: NonBlank({ maxLength: 200 }), description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))) },
  { $id: 'SkillCreate', additionalProperties: false },
);
export type SkillCreate = Static<typeof SkillCreate>;
export const SkillUpdate = Type.Object(
  { name: Type.Optional(NonBlank({ maxLength: 200 })), description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))) },
  { $id: 'SkillUpdate', additionalProperties: false },
);
export type SkillUpdate = Static<typeof SkillUpdate>;
export const UserSkillParams = Type.Object({ id: Type.String({ format: 'uuid' }), skillId: Type.String({ format: 'uuid' }) });

export const CONSENT_CHANNELS = ['all', 'email', 'phone', 'sms', 'messaging', 'social', 'webchat'] as const;

export const Consent = Type.Object({
  id: Type.String(),
  customer_id: Type.String(),
  channel: StringEnum(CONSENT_CHANNELS),
  consent_status: StringEnum(['opted_in', 'opted_out']),
  notes: Nullable(Type.String()),
  recorded_by: Nullable(Type.String()),
  created_at: Type.String(),
}, { $id: 'Consent' });
export type Consent = Static<typeof Consent>;

export const ConsentPut = Type.Object({
  consent_status: StringEnum(['opted_in', 'opted_out']),
  channel: Type.Optional(StringEnum(CONSENT_CHANNELS, { default: 'all' })),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
}, { $id: 'ConsentPut', additionalProperties: false });
export type ConsentPut = Static<typeof ConsentPut>;

export const ConsentListQuery = Type.Object({ ...pageParams });
