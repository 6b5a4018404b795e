import { Type, type Static } from '@sinclair/typebox';
import { pageParams } from '../core/pagination.js';
import { NonBlank, Nullable, StringEnum } from '../core/schema-types.js';
import { CHANNEL_NAMES } from './adapter.js';

/** Request and response schemas of /channel-sources, the channel webhooks and templates (CONTRACT §17). */
const ConfigIn = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 2000 }), {
  maxProperties: 12, description: 'The channel\'s keys (CONTRACT §17); secrets are stored encrypted and read back masked',
});

export const ChannelSourceOut = Type.Object({
  id: Type.String(),
  channel: StringEnum(CHANNEL_NAMES),
  name: Type.String(),
  config: Type.Record(Type.String(), Type.String(), { description: 'Secrets masked: ******** and, for long ones, their last four characters' }),
  status: StringEnum(['active', 'error', 'disconnected'] as const),
  last_error: Nullable(Type.String()),
  webhook_url: Type.String({ description: 'Where the vendor must send this source\'s webhooks' }),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'ChannelSource' });
export type ChannelSourceOut = Static<typeof ChannelSourceOut>;

export const ChannelSourceCreate = Type.Object({
  channel: StringEnum(CHANNEL_NAMES),
  name: NonBlank({ maxLength: 200 }),
  config: ConfigIn,
}, { $id: 'ChannelSourceCreate', additionalProperties: false });
export type ChannelSourceCreate = Static<typeof ChannelSourceCreate>;

export const ChannelSourceUpdate = Type.Object({
  name: Type.Optional(NonBlank({ maxLength: 200 })),
  config: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 2000 }), {
    maxProperties: 12, description: 'Keys to change; a masked value (starting with ********) keeps the stored secret',
  })),
}, { $id: 'ChannelSourceUpdate', additionalProperties: false });
export type ChannelSourceUpdate = Static<typeof ChannelSourceUpdate>;

export const ChannelSourceListQuery = Type.Object({ ...pageParams, channel: Type.Optional(StringEnum(CHANNEL_NAMES)) });
export type ChannelSourceListQuery = Static<typeof ChannelSourceListQuery>;

export const WebhookAck = Type.Object({
  received: Type.Integer({ description: 'Messages accepted for processing' }),
  duplicates: Type.Integer({ description: 'Messages whose vendor id was seen before (ignored)' }),
}, { $id: 'ChannelWebhookAck' });
export type WebhookAck = Static<typeof WebhookAck>;

export const HandshakeQuery = Type.Object({
  'hub.mode': Type.Optional(Type.String({ maxLength: 50 })),
  'hub.verify_token': Type.Optional(Type.String({ maxLength: 500 })),
  'hub.challenge': Type.Optional(Type.String({ maxLength: 500 })),
});
export type HandshakeQuery = Static<typeof HandshakeQuery>;

export const Delivery = Type.Object({
  status: StringEnum(['pending', 'sent', 'failed'] as const),
  error: Nullable(Type.String()),
  external_id: Nullable(Type.String()),
});
export type Delivery = Static<typeof Delivery>;

export const TemplateOut = Type.Object({
  id: Type.String(),
  source_id: Type.String(),
  name: Type.String(),
  language: Type.String(),
  category: Nullable(Type.String()),
  status: Type.String({ description: 'approved, pending, rejected, … as the vendor says (lower case)' }),
  components: Type.Array(Type.Unknown()),
  updated_at: Type.String(),
}, { $id: 'ChannelTemplate' });
export type TemplateOut = Static<typeof TemplateOut>;

export const TemplateListQuery = Type.Object({ ...pageParams, source_id: Type.Optional(Type.String({ format: 'uuid' })) });
export type TemplateListQuery = Static<typeof TemplateListQuery>;

const TEMPLATE_NAME = '^[a-z0-9_]{1,512}$';
export const TemplateCreate = Type.Object({
  source_id: Type.Optional(Type.String({ format: 'uuid', description: 'The messaging_a source (default: the only active one)' })),
  name: Type.String({ pattern: TEMPLATE_NAME, maxLength: 512 }),
  language: Type.Optional(Type.String({ pattern: '^[a-zA-Z_]{2,10}$', maxLength: 10 })),
  category: StringEnum(['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const),
  components: Type.Array(Type.Object({}, { additionalProperties: true, maxProperties: 20 }), { minItems: 1, maxItems: 10 }),
}, { $id: 'ChannelTemplateCreate', additionalProperties: false });
export type TemplateCreate = Static<typeof TemplateCreate>;

export const TemplateSendIn = Type.Object({
  ticket_id: Type.String({ format: 'uuid' }),
  template_name: Type.String({ pattern: TEMPLATE_NAME, maxLength: 512 }),
  language: Type.Optional(Type.String({ pattern: '^[a-zA-Z_]{2,10}$', maxLength: 10 })),
  parameters: Type.Optional(Type.Array(Type.Object({ type: StringEnum(['text'] as const), text: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false }), { maxItems: 20 })),
}, { $id: 'ChannelTemplateSend', additionalProperties: false });
export type TemplateSendIn = Static<typeof TemplateSendIn>;
