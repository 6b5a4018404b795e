import type { Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { tenantOfInboundToken } from './inbound-token.js';
import { receiveInbound } from './inbound.js';
import type { InboundAnswer } from './schemas.js';

/**
 * The inbound route's service (CONTRACT §7): the token decides the tenant (an unknown or forged
 * token, or one of a deleted tenant, is 404), then the one inbound code path.
 * 40 MiB leaves room for a 25 MB attachment in base64 (×4/3) plus the rest of the message.
 */
export const INBOUND_MAX_BYTES = 40 * 1024 * 1024;

export async function receiveInboundForToken(deps: Deps, token: string, raw: Buffer, now: Date, requestId: string | null): Promise<InboundAnswer> {
  const tenantId = tenantOfInboundToken(deps.box, token);
  const tenant = tenantId ? await deps.db('tenants').where({ id: tenantId }).first('id') : null;
  if (!tenant) throw errors.notFound('inbound mailbox');
  return receiveInbound(deps, tenant.id, raw, now, requestId);
}
