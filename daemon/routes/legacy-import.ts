import { route } from '../route.js';
import type { Role } from '../../src/core/context.js';
import { IdParams } from '../../src/core/schema-types.js';
import { getImport, startImport, testConnection } from '../../src/legacy-import/runs.js';
import { ImportQueued, ImportRun, StartImportBody, TestConnectionAnswer, TestConnectionBody } from '../../src/legacy-import/schemas.js';

/** The osTicket import (CONTRACT §12): administrators only. */
const tags = ['legacy_import'];
const ADMIN = ['admin'] as const satisfies readonly Role[];

export const legacyImportRoutes = [
  route({
    method: 'POST', url: '/legacy-import/test-connection', access: { kind: 'token', scope: 'osticket_import:read', roles: ADMIN },
    summary: 'Check that a source is a reachable osTicket database; answers its version and row counts', tags,
    // The check waits on a remote database: no transaction is held for it.
    transaction: false,
    schema: { body: TestConnectionBody, response: { 200: TestConnectionAnswer } },
    example: { body: { source: 'mysql://reader:secret@db.internal:3306/osticket?prefix=ost_' } },
    handler: (ctx, { body }) => testConnection(ctx, body.source),
  }),
  route({
    method: 'POST', url: '/legacy-import', access: { kind: 'token', scope: 'osticket_import:write', roles: ADMIN },
    summary: 'Start an osTicket import in the background; poll GET /legacy-import/{id}', tags,
    schema: { body: StartImportBody, response: { 202: ImportQueued } }, status: 202,
    example: { body: { source: 'mysql://reader:secret@db.internal:3306/osticket?prefix=ost_', dry_run: true } },
    handler: (ctx, { body }) => startImport(ctx, body),
  }),
  route({
    method: 'GET', url: '/legacy-import/:id', access: { kind: 'token', scope: 'osticket_import:read', roles: ADMIN },
    summary: 'The status and result of an import run', tags,
    schema: { params: IdParams, response: { 200: ImportRun } },
    handler: (ctx, { params }) => getImport(ctx, params.id),
  }),
];
