import { Type, type Static } from '@sinclair/typebox';
import { pageParams } from '../core/pagination.js';
import { NonBlank, Nullable, StringEnum } from '../core/schema-types.js';
import { MAX_CONDITIONS } from '../tickets/conditions.js';
import { ROUTING_TRIGGERS } from './models.js';

/** Request and response schemas of tags, saved filters, macros, canned responses, routing rules. */

const Uuid = Type.String({ format: 'uuid' });
export const MAX_ACTIONS = 20;

// ---- Tags ----
const HexColor = Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', maxLength: 7, description: 'Hex colour #rrggbb (stored lowercase)' });
export const TagName = NonBlank({ maxLength: 100 });

export const Tag = Type.Object({
  id: Type.String(), name: Type.String(), color: Type.String(), created_at: Type.String(), updated_at: Type.String(),
}, { $id: 'Tag' });
export type Tag = Static<typeof Tag>;

export const TagCreate = Type.Object({ name: TagName, color: Type.Optional(HexColor) }, { $id: 'TagCreate', additionalProperties: false });
export type TagCreate = Static<typeof TagCreate>;
export const TagUpdate = Type.Object({ name: Type.Optional(TagName), color: Type.Optional(HexColor) }, { $id: 'TagUpdate', additionalProperties: false });
export type TagUpdate = Static<typeof TagUpdate>;

export const TagListQuery = Type.Object({
  ...pageParams,
  q: Type.Optional(Type.String({ maxLength: 100, description: 'Case-insensitive prefix of the name' })),
});
export type TagListQuery = Static<typeof TagListQuery>;

export const TicketTags = Type.Object({ tags: Type.Array(Type.String()) }, { $id: 'TicketTags' });
export const TicketTagsReplace = Type.Object(
  { tags: Type.Array(TagName, { maxItems: 50 }) },
  { $id: 'TicketTagsReplace', additionalProperties: false },
);
export type TicketTagsReplace = Static<typeof TicketTagsReplace>;

export const TagProfile = Type.Object({
  tickets: Type.Integer({ description: 'How many tickets the profile is derived from' }),
  tags: Type.Array(Type.Object({ name: Type.String(), count: Type.Integer(), share: Type.Number(), color: Nullable(Type.String()) })),
}, { $id: 'TagProfile' });
export type TagProfile = Static<typeof TagProfile>;

// ---- Conditions and actions (CONTRACT §4) ----
export const ConditionItem = Type.Object({
  field: Type.String({ maxLength: 100 }),
  operator: Type.String({ maxLength: 20 }),
  value: Type.Unknown({ description: 'A value, or a list of values for in; null for "none" where the field allows it' }),
}, { additionalProperties: false });
export const Conditions = Type.Array(ConditionItem, { maxItems: MAX_CONDITIONS });

const ActionItem = (types: readonly string[]) => Type.Object({
  type: StringEnum(types),
  value: Type.Unknown({ description: 'Depends on the type; see docs/api.md' }),
}, { additionalProperties: false });
export const ActionOut = Type.Object({ type: Type.String(), value: Type.Unknown() });
const ConditionOut = Type.Object({ field: Type.String(), operator: Type.String(), value: Type.Unknown() });

// ---- Saved filters ----
export const SavedFilter = Type.Object({
  id: Type.String(), name: Type.String(), conditions: Type.Array(ConditionOut), owner_id: Type.String(),
  created_at: Type.String(), updated_at: Type.String(),
}, { $id: 'SavedFilter' });
export type SavedFilter = Static<typeof SavedFilter>;
export const SavedFilterCreate = Type.Object({ name: NonBlank({ maxLength: 200 }), conditions: Conditions }, { $id: 'SavedFilterCreate', additionalProperties: false });
export type SavedFilterCreate = Static<typeof SavedFilterCreate>;
export const SavedFilterUpdate = Type.Object(
  { name: Type.Optional(NonBlank({ maxLength: 200 })), conditions: Type.Optional(Conditions) },
  { $id: 'SavedFilterUpdate', additionalProperties: false },
);
export type SavedFilterUpdate = Static<typeof SavedFilterUpdate>;

// ---- Macros ----
export const MACRO_ACTIONS = ['set_status', 'add_tag', 'post_reply'] as const;
export const Macro = Type.Object({
  id: Type.String(), name: Type.String(), actions: Type.Array(ActionOut), created_at: Type.String(), updated_at: Type.String(),
}, { $id: 'Macro' });
export type Macro = Static<typeof Macro>;
const MacroActions = Type.Array(ActionItem(MACRO_ACTIONS), { minItems: 1, maxItems: MAX_ACTIONS });
export const MacroCreate = Type.Object({ name: NonBlank({ maxLength: 200 }), actions: MacroActions }, { $id: 'MacroCreate', additionalProperties: false });
export type MacroCreate = Static<typeof MacroCreate>;
export const MacroUpdate = Type.Object(
  { name: Type.Optional(NonBlank({ maxLength: 200 })), actions: Type.Optional(MacroActions) },
  { $id: 'MacroUpdate', additionalProperties: false },
);
export type MacroUpdate = Static<typeof MacroUpdate>;
export const MacroApplyParams = Type.Object({ id: Uuid, macroId: Uuid });

// ---- Canned responses ----
const Shortcut = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', maxLength: 64, description: 'What the agent types after / in the composer' });
export const CannedResponse = Type.Object({
  id: Type.String(), title: Type.String(), shortcut: Type.String(), body: Type.String(), placeholders: Type.Array(Type.String()),
  created_at: Type.String(), updated_at: Type.String(),
}, { $id: 'CannedResponse' });
export type CannedResponse = Static<typeof CannedResponse>;
export const CannedResponseCreate = Type.Object({
  title: NonBlank({ maxLength: 200 }), shortcut: Shortcut, body: NonBlank({ maxLength: 20_000 }),
}, { $id: 'CannedResponseCreate', additionalProperties: false });
export type CannedResponseCreate = Static<typeof CannedResponseCreate>;
export const CannedResponseUpdate = Type.Object({
  title: Type.Optional(NonBlank({ maxLength: 200 })), shortcut: Type.Optional(Shortcut), body: Type.Optional(NonBlank({ maxLength: 20_000 })),
}, { $id: 'CannedResponseUpdate', additionalProperties: false });
export type CannedResponseUpdate = Static<typeof CannedResponseUpdate>;
export const CannedResponseListQuery = Type.Object({
  ...pageParams,
  q: Type.Optional(Type.String({ maxLength: 100, description: 'Prefix of the shortcut, or a case-insensitive part of the title' })),
});
export type CannedResponseListQuery = Static<typeof CannedResponseListQuery>;
export const CannedResponseRender = Type.Object({ ticket_id: Uuid }, { $id: 'CannedResponseRender', additionalProperties: false });
export const RenderedResponse = Type.Object({ body: Type.String() }, { $id: 'RenderedResponse' });

// ---- Routing rules ----
export const ROUTING_ACTIONS = ['set_team', 'set_priority', 'require_skill'] as const;
const RoutingActions = Type.Array(ActionItem(ROUTING_ACTIONS), { minItems: 1, maxItems: MAX_ACTIONS });
const Triggers = Type.Array(StringEnum(ROUTING_TRIGGERS), { minItems: 1, maxItems: 3, description: 'Occasions the rule runs on (repeats count once)' });
export const RoutingRule = Type.Object({
  id: Type.String(), name: Type.String(), conditions: Type.Array(ConditionOut), actions: Type.Array(ActionOut),
  position: Type.Integer(), active: Type.Boolean(), triggers: Type.Array(Type.String()),
  created_at: Type.String(), updated_at: Type.String(),
}, { $id: 'RoutingRule' });
export type RoutingRule = Static<typeof RoutingRule>;
const Position = Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Rules run in ascending position; default: after the last' });
export const RoutingRuleCreate = Type.Object({
  name: NonBlank({ maxLength: 200 }),
  conditions: Conditions,
  actions: RoutingActions,
  position: Type.Optional(Position),
  active: Type.Optional(Type.Boolean({ default: true })),
  triggers: Type.Optional(Triggers),
}, { $id: 'RoutingRuleCreate', additionalProperties: false });
export type RoutingRuleCreate = Static<typeof RoutingRuleCreate>;
export const RoutingRuleUpdate = Type.Object({
  name: Type.Optional(NonBlank({ maxLength: 200 })),
  conditions: Type.Optional(Conditions),
  actions: Type.Optional(RoutingActions),
  position: Type.Optional(Position),
  active: Type.Optional(Type.Boolean()),
  triggers: Type.Optional(Triggers),
}, { $id: 'RoutingRuleUpdate', additionalProperties: false });
export type RoutingRuleUpdate = Static<typeof RoutingRuleUpdate>;
