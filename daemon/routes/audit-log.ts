import { route } from '../route.js';
import { ListOf } from '../../src/core/pagination.js';
import { AuditEntry, AuditQuery, listAuditLog } from '../../src/audit/query.js';

/** The immutable audit trail (Enterprise). */
export const auditLogRoutes = [
  route({
    method: 'GET', url: '/audit-log', access: { kind: 'token', scope: 'audit_log:read' }, feature: 'audit_log', summary: 'Audit trail, newest first', tags: ['audit_log'],
    schema: { querystring: AuditQuery, response: { 200: ListOf(AuditEntry, { cursor: true }) } },
    handler: (ctx, { query }) => listAuditLog(ctx, query),
  }),
];
