import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ANY_MEDIA_TYPE, route, STAFF } from '../route.js';
import { formParts } from '../multipart.js';
import { ListOf, PageQuery } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import {
  configureExtension, getExtension, installExtension, installExtensionForm, listExtensions, rotateHookToken, setExtensionEnabled, uninstallExtension,
} from '../../src/extensions/service.js';
import { receiveHook } from '../../src/extensions/hook.js';
import { addThreadNote, bindChatRoute, listChatRoutes, listThreadNotes, openChatThread } from '../../src/extensions/chatops.js';
import { createFileRequest } from '../../src/extensions/file-requests.js';
import { createExternal, extensionContext, linkTicket, runAction, runReadOp, unlinkTicket } from '../../src/extensions/staff.js';
import {
  ActionIn, ActionOut, ContextBlock, ExtensionConfigPatch, ExtensionInstall, ExtensionOut, ExtensionPatch, HookUrlOut, LinkIn, LinkOut,
  ChatProviderParams, ChatRouteIn, ChatRouteList, ChatRouteOut, ChatThreadIn, ChatThreadOut, FileRequestIn, FileRequestOut,
  ThreadNoteIn, ThreadNoteList, ThreadNoteOut, MAX_MODULE_BYTES, OpOut, OpParams, OpQuery, ProviderParams,
} from '../../src/extensions/schemas.js';

/** Extensions: WebAssembly plugins (SPEC "Extensions", CONTRACT §13). */
const tags = ['extensions'];
const read = { kind: 'token', scope: 'extensions:read' } as const;
const write = { kind: 'token', scope: 'extensions:write' } as const;
const ctxRead = { kind: 'token', scope: 'extension_context:read', roles: STAFF } as const;
const ctxWrite = { kind: 'token', scope: 'extension_context:write', roles: STAFF } as const;

const CreateResult = Type.Object({
  key: Type.String(), title: Type.String(), status: Type.String(), assignee: Type.String(), priority: Type.String(), url: Type.String(),
}, { $id: 'ExtensionCreateResult' });
const CreateIn = Type.Object({
  values: Type.Record(Type.String({ maxLength: 64 }), Type.Union([
    Type.String({ maxLength: 20000 }), Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100 }),
  ]), { maxProperties: 64 }),
}, { $id: 'ExtensionCreateIn', additionalProperties: false });

export const extensionsRoutes = [
  route({
    method: 'GET', url: '/extensions', access: read, summary: 'Installed extensions', tags,
    schema: { querystring: PageQuery, response: { 200: ListOf(ExtensionOut) } },
    handler: (ctx, { query }) => listExtensions(ctx, query),
  }),
  route({
    method: 'POST', url: '/extensions', access: write, summary: 'Install a plugin: its manifest and its .wasm module (multipart, or JSON with the module in base64)', tags,
    description: 'Either `multipart/form-data` with the parts `manifest` (the manifest as JSON) and `module` (the .wasm file), or JSON `{ manifest, module_base64 }`. The manifest and the module are checked together; every problem is named (`manifest.<field>`, `module` or `module_base64`) and nothing is stored on refusal. The module is stored by content hash with its memory capped at 64 MiB.',
    errors: ['already_exists', 'conflict', 'payload_too_large'],
    multipart: {
      field: 'module', maxFiles: 2, description: 'The manifest and the module as two parts',
      parts: [
        { name: 'manifest', binary: false, description: 'The plugin manifest, JSON (a field or a file)' },
        { name: 'module', binary: true, description: `The .wasm module, at most ${MAX_MODULE_BYTES} bytes` },
      ],
    },
    schema: { body: ExtensionInstall, response: { 201: ExtensionOut } }, status: 201,
    handler: async (ctx, { body, request }) => (request.isMultipart()
      ? installExtensionForm(ctx, await formParts(request, ['manifest', 'module'], MAX_MODULE_BYTES + 1))
      : installExtension(ctx, body)),
  }),
  route({
    method: 'GET', url: '/extensions/:id', access: read, summary: 'An installed extension', tags,
    schema: { params: IdParams, response: { 200: ExtensionOut } },
    handler: (ctx, { params }) => getExtension(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/extensions/:id', access: write, summary: 'Enable or disable an extension', tags,
    schema: { params: IdParams, body: ExtensionPatch, response: { 200: ExtensionOut } },
    example: { body: { enabled: false } },
    handler: (ctx, { params, body }) => setExtensionEnabled(ctx, params.id, body.enabled),
  }),
  route({
    method: 'PATCH', url: '/extensions/:id/config', access: write, summary: 'Set configuration values (password-typed ones are stored encrypted and read back masked)', tags,
    schema: { params: IdParams, body: ExtensionConfigPatch, response: { 200: ExtensionOut } },
    handler: (ctx, { params, body }) => configureExtension(ctx, params.id, body),
  }),
  route({
    method: 'POST', url: '/extensions/:id/hook-token/rotate', access: write, summary: 'A new inbound hook URL; the old one stops working at once', tags,
    errors: ['conflict'],
    schema: { params: IdParams, response: { 200: HookUrlOut } },
    handler: (ctx, { params }) => rotateHookToken(ctx, params.id),
  }),
  route({
    method: 'DELETE', url: '/extensions/:id', access: { kind: 'token', scope: 'extensions:delete' }, summary: 'Uninstall an extension', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => uninstallExtension(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/tickets/:id/extension-context/:provider', access: ctxRead, summary: "The extension's live context block for a ticket", tags,
    errors: ['conflict', 'extension_failed'],
    schema: { params: ProviderParams, response: { 200: ContextBlock } },
    handler: (ctx, { params }) => extensionContext(ctx, params.id, params.provider),
  }),
  route({
    method: 'POST', url: '/tickets/:id/extension-actions/:provider', access: ctxWrite, summary: 'Run a panel action of the extension (audited)', tags,
    errors: ['conflict', 'extension_failed'],
    schema: { params: ProviderParams, body: ActionIn, response: { 200: ActionOut } },
    handler: (ctx, { params, body }) => runAction(ctx, params.id, params.provider, body),
  }),
  route({
    method: 'POST', url: '/tickets/:id/extension-link/:provider', access: ctxWrite, summary: 'Bind the ticket to an external record (audited)', tags,
    errors: ['conflict', 'extension_failed'],
    schema: { params: ProviderParams, body: LinkIn, response: { 200: LinkOut } },
    handler: (ctx, { params, body }) => linkTicket(ctx, params.id, params.provider, body.external_id),
  }),
  route({
    method: 'DELETE', url: '/tickets/:id/extension-link/:provider', access: ctxWrite, summary: 'Unlink the external record', tags,
    errors: ['conflict', 'extension_failed'],
    schema: { params: ProviderParams }, status: 204,
    handler: (ctx, { params }) => unlinkTicket(ctx, params.id, params.provider),
  }),
  route({
    method: 'POST', url: '/tickets/:id/extension-create/:provider', access: ctxWrite, summary: 'Run the create op with the submitted form values; records the link', tags,
    errors: ['conflict', 'extension_failed'],
    schema: { params: ProviderParams, body: CreateIn, response: { 200: CreateResult } },
    handler: (ctx, { params, body }) => createExternal(ctx, params.id, params.provider, body.values),
  }),
  route({
    method: 'GET', url: '/extension-ops/:provider/:op', access: { kind: 'token', roles: STAFF }, summary: "Run one of the extension's read ops (query parameters are its input)", tags,
    errors: ['conflict', 'extension_failed'],
    schema: { params: OpParams, querystring: OpQuery, response: { 200: OpOut } },
    handler: (ctx, { params, query }) => runReadOp(ctx, params.provider, params.op, query as Record<string, string>),
  }),
  route({
    method: 'POST', url: '/tickets/:id/storage-file-requests/:provider', access: ctxWrite, summary: "A tokenized file request from the storage extension's vendor (audited)", tags,
    description: "Runs the extension's `create_file_request` op with the request and the ticket; it answers the vendor's tokenized upload address. Recorded as `ticket.extension_action` and in the audit log.",
    errors: ['conflict', 'extension_failed'],
    schema: { params: ProviderParams, body: FileRequestIn, response: { 201: FileRequestOut } }, status: 201,
    example: { body: { title: 'Screenshots of the error', max_file_size_bytes: 10485760, allowed_extensions: ['png', 'pdf'] } },
    handler: (ctx, { params, body }) => createFileRequest(ctx, params.id, params.provider, body),
  }),
  route({
    method: 'GET', url: '/integrations/chat/:provider/routes', access: { kind: 'token', scope: 'chatops_integrations:read', roles: STAFF },
    summary: 'Teams bound to chat channels of a chat extension', tags,
    schema: { params: ChatProviderParams, response: { 200: ChatRouteList } },
    handler: (ctx, { params }) => listChatRoutes(ctx, params.provider),
  }),
  route({
    method: 'PUT', url: '/integrations/chat/:provider/routes', access: { kind: 'token', scope: 'chatops_integrations:write', roles: STAFF },
    summary: "Bind a team to a chat channel (replaces the team's earlier channel)", tags,
    errors: ['conflict'],
    schema: { params: ChatProviderParams, body: ChatRouteIn, response: { 200: ChatRouteOut } },
    example: { body: { team_id: '0190a6f2-7c2e-7b3d-8c4e-5f6a7b8c9d0e', channel_id: 'C024BE91L', channel_name: '#support' } },
    handler: (ctx, { params, body }) => bindChatRoute(ctx, params.provider, body),
  }),
  route({
    method: 'POST', url: '/tickets/:id/chat-thread', access: { kind: 'token', scope: 'chatops:write', roles: STAFF },
    summary: "Open the ticket's chat thread in its team's channel", tags,
    description: "The chat extension's `open_thread` op opens the thread in the channel bound to the ticket's team; one thread per ticket. Recorded as `ticket.extension_action` and in the audit log.",
    errors: ['conflict', 'extension_failed'],
    schema: { params: IdParams, body: ChatThreadIn, response: { 201: ChatThreadOut } }, status: 201,
    handler: (ctx, { params, body }) => openChatThread(ctx, params.id, body ?? {}),
  }),
  route({
    method: 'GET', url: '/tickets/:id/thread-notes', access: { kind: 'token', scope: 'chatops:read', roles: STAFF },
    summary: "Notes written into the ticket's chat thread", tags,
    schema: { params: IdParams, response: { 200: ThreadNoteList } },
    handler: (ctx, { params }) => listThreadNotes(ctx, params.id),
  }),
  route({
    method: 'POST', url: '/tickets/:id/thread-notes', access: { kind: 'token', scope: 'chatops:write', roles: STAFF },
    summary: "Write a note into the ticket's chat thread (the extension posts it)", tags,
    errors: ['conflict', 'extension_failed'],
    schema: { params: IdParams, body: ThreadNoteIn, response: { 201: ThreadNoteOut } }, status: 201,
    handler: (ctx, { params, body }) => addThreadNote(ctx, params.id, body.body),
  }),
];

const HookParams = Type.Object({ token: Type.String({ maxLength: 200 }) });
export const HOOK_MAX_BYTES = 1024 * 1024;

async function hook(ctx: Parameters<Parameters<typeof route>[0]['handler']>[0], request: FastifyRequest, reply: FastifyReply, token: string) {
  const url = new URL(request.url, 'http://hook.invalid');
  const answer = await receiveHook(ctx.deps, token, {
    method: request.method, path: url.pathname, query: Object.fromEntries(url.searchParams), headers: request.headers as Record<string, string>,
    body: Buffer.isBuffer(request.body) ? request.body : null,
  }, ctx.now);
  return reply.code(answer.status).headers(answer.headers).send(answer.body);
}

const hookDescription = 'Public: the token in the path names the tenant and the extension. The request (method, path, query, headers, body bytes of any media type) goes to the plugin\'s `webhook_receive` as it came; the plugin chooses the answer (default `200`, empty; e.g. `401` for a bad signature, `429`/`503` to make the vendor retry). A plugin failure is answered `200` so the vendor stops retrying. Calls per extension are limited per minute (`429`).';

/** The inbound vendor hook (SPEC rules 1–9); registered apart, as it takes any media type. */
export const extensionHookRoutes = [
  route({
    method: 'POST', url: '/integrations/extensions/hook/:token', operationId: 'integrations.extensions.hook.receive', access: { kind: 'public' },
    summary: 'Inbound vendor webhook for one installed extension', description: hookDescription, tags,
    rawBody: { contentType: ANY_MEDIA_TYPE, maxBytes: HOOK_MAX_BYTES, description: 'The vendor\'s request body, passed to the plugin as it came' },
    errors: ['resource_not_found'],
    schema: { params: HookParams }, transaction: false,
    handler: (ctx, { params, request, reply }) => hook(ctx, request, reply, params.token),
  }),
  route({
    method: 'GET', url: '/integrations/extensions/hook/:token', operationId: 'integrations.extensions.hook.handshake', access: { kind: 'public' },
    summary: 'Setup handshake of the vendor webhook (the plugin echoes `challenge`)', description: hookDescription, tags,
    errors: ['resource_not_found'],
    schema: { params: HookParams }, transaction: false,
    handler: (ctx, { params, request, reply }) => hook(ctx, request, reply, params.token),
  }),
];
