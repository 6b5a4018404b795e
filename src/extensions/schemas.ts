import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../core/schema-types.js';
import { CONFIG_FIELD_TYPES } from './manifest.js';

/** Request and response schemas of /extensions and the staff extension routes (CONTRACT §13). */
export const MAX_MODULE_BYTES = 8 * 1024 * 1024;

const ConfigFieldOut = Type.Object({
  key: Type.String(), label: Type.String(), type: StringEnum(CONFIG_FIELD_TYPES), description: Type.String(), required: Type.Boolean(),
});

export const ExtensionOut = Type.Object({
  id: Type.String(),
  name: Type.String(),
  version: Type.String(),
  kind: Type.String(),
  description: Type.String(),
  author: Type.String(),
  enabled: Type.Boolean(),
  entrypoints: Type.Array(Type.String()),
  config_fields: Type.Array(ConfigFieldOut),
  scopes: Type.Object({
    http_hosts: Type.Array(Type.String()),
    config_keys: Type.Array(Type.String()),
    webhook: Type.Boolean(),
    core: Type.Array(Type.String()),
  }),
  read_ops: Type.Array(Type.String()),
  link_op: Nullable(Type.String()),
  unlink_op: Nullable(Type.String()),
  create_op: Nullable(Type.String()),
  create_form_op: Nullable(Type.String()),
  search_op: Nullable(Type.String()),
  module_sha256: Type.String({ description: 'SHA-256 of the stored module (after the memory cap was applied)' }),
  hook_url: Nullable(Type.String({ description: 'Where the vendor sends webhooks; null unless scopes.webhook' })),
  config: Type.Record(Type.String(), Type.String(), { description: 'Values set so far; password-typed values read back as ********' }),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { $id: 'Extension' });
export type ExtensionOut = Static<typeof ExtensionOut>;

export const ExtensionInstall = Type.Object({
  manifest: Type.Object({}, { additionalProperties: true, maxProperties: 32, description: 'The plugin manifest (SPEC "Extension (plugin) manifest"); every rule is checked by the service, each problem named' }),
  module_base64: Type.String({ minLength: 1, maxLength: Math.ceil(MAX_MODULE_BYTES / 3) * 4, description: 'The .wasm module, base64' }),
}, { $id: 'ExtensionInstall', additionalProperties: false });
export type ExtensionInstall = Static<typeof ExtensionInstall>;

export const ExtensionConfigPatch = Type.Object({
  config: Type.Record(Type.String({ maxLength: 64 }), Nullable(Type.String({ maxLength: 4000 })), {
    maxProperties: 64, description: 'Values by config key; null removes one',
  }),
}, { $id: 'ExtensionConfigPatch', additionalProperties: false });
export type ExtensionConfigPatch = Static<typeof ExtensionConfigPatch>;

export const ExtensionPatch = Type.Object({
  enabled: Type.Boolean(),
}, { $id: 'ExtensionPatch', additionalProperties: false });
export type ExtensionPatch = Static<typeof ExtensionPatch>;

export const HookUrlOut = Type.Object({ hook_url: Type.String() }, { $id: 'ExtensionHookUrl' });

export const ProviderParams = Type.Object({ id: Type.String({ format: 'uuid' }), provider: Type.String({ maxLength: 63 }) });
export const OpParams = Type.Object({ provider: Type.String({ maxLength: 63 }), op: Type.String({ maxLength: 64 }) });

const ContextField = Type.Object({ label: Type.String(), value: Type.String(), url: Type.Optional(Type.String()) });
const ContextAction = Type.Object({
  id: Type.String(), label: Type.String(), kind: Type.String(),
  url: Type.Optional(Type.String()), op: Type.Optional(Type.String()), inputs: Type.Optional(Type.Array(Type.Unknown())),
});
const ChecklistItem = Type.Object({ id: Type.String(), name: Type.String(), completed: Type.Boolean() });
export const ContextBlock = Type.Object({
  provider: Type.String(),
  external_id: Nullable(Type.String()),
  title: Type.String(),
  fields: Type.Array(ContextField),
  actions: Type.Array(ContextAction),
  checklist: Type.Array(ChecklistItem),
}, { $id: 'ExtensionContextBlock' });
export type ContextBlock = Static<typeof ContextBlock>;

export const ActionIn = Type.Object({
  op: Type.String({ maxLength: 64 }),
  params: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 4000 }), { maxProperties: 32 })),
}, { $id: 'ExtensionActionIn', additionalProperties: false });
export type ActionIn = Static<typeof ActionIn>;

export const ActionOut = Type.Object({
  op: Type.String(),
  result: Type.Unknown({ description: 'The document the plugin answered' }),
}, { $id: 'ExtensionActionResult' });

export const LinkIn = Type.Object({ external_id: Type.String({ minLength: 1, maxLength: 500 }) }, { $id: 'ExtensionLinkIn', additionalProperties: false });
export const LinkOut = Type.Object({
  provider: Type.String(), ticket_id: Type.String(), external_id: Type.String(), created_at: Type.String(),
}, { $id: 'ExtensionLink' });

// Read ops take any query parameters as their input (`q` for search, the parent field's key for options).
export const OpQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 1000, description: 'The search text of a search op' })),
}, { additionalProperties: Type.String({ maxLength: 1000 }), maxProperties: 16 });
export const OpOut = Type.Unknown({ description: 'The document the read op answered' });

export const FileRequestIn = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 4000 })),
  max_file_size_bytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 ** 4, description: 'Largest file the customer may upload' })),
  allowed_extensions: Type.Optional(Type.Array(Type.String({ pattern: '^\\.?[A-Za-z0-9]{1,16}$', maxLength: 17 }), { maxItems: 50, description: 'File name extensions, e.g. ["pdf", "png"]' })),
}, { $id: 'StorageFileRequestIn', additionalProperties: false });

export const FileRequestOut = Type.Object({
  provider: Type.String(),
  ticket_id: Type.String(),
  title: Type.String(),
  description: Type.String(),
  max_file_size_bytes: Nullable(Type.Integer()),
  allowed_extensions: Type.Array(Type.String()),
  url: Type.String({ description: "The vendor's tokenized upload address for the customer" }),
  token: Nullable(Type.String()),
  expires_at: Nullable(Type.String()),
}, { $id: 'StorageFileRequest' });

export const ChatProviderParams = Type.Object({ provider: Type.String({ maxLength: 63 }) });
export const ChatRouteIn = Type.Object({
  team_id: Type.String({ format: 'uuid' }),
  channel_id: Type.String({ minLength: 1, maxLength: 200 }),
  channel_name: Type.Optional(Type.String({ maxLength: 200 })),
}, { $id: 'ChatRouteIn', additionalProperties: false });
export const ChatRouteOut = Type.Object({
  provider: Type.String(), team_id: Type.String(), channel_id: Type.String(), channel_name: Type.String(), created_at: Type.String(), updated_at: Type.String(),
}, { $id: 'ChatRoute' });
export const ChatRouteList = Type.Object({ data: Type.Array(ChatRouteOut) }, { $id: 'ChatRouteList' });

export const ChatThreadIn = Type.Object({
  provider: Type.Optional(Type.String({ maxLength: 63, description: 'The chat extension; may be left out when only one is enabled' })),
}, { $id: 'ChatThreadIn', additionalProperties: false });
export const ChatThreadOut = Type.Object({
  provider: Type.String(), ticket_id: Type.String(), channel_id: Type.String(), thread_id: Type.String(), url: Nullable(Type.String()), created_at: Type.String(),
}, { $id: 'ChatThread' });

export const ThreadNoteIn = Type.Object({ body: Type.String({ minLength: 1, maxLength: 10000 }) }, { $id: 'ThreadNoteIn', additionalProperties: false });
export const ThreadNoteOut = Type.Object({
  id: Type.String(), ticket_id: Type.String(), body: Type.String(), author_id: Nullable(Type.String()), author_name: Type.String(),
  external_id: Nullable(Type.String()), created_at: Type.String(),
}, { $id: 'ThreadNote' });
export const ThreadNoteList = Type.Object({ data: Type.Array(ThreadNoteOut) }, { $id: 'ThreadNoteList' });
