import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestIdentity } from '../route-types.js';
import type { Deps } from '../../src/core/context.js';
import { systemNow, type Clock } from '../../src/core/clock.js';
import { resolveBearerToken } from '../../src/auth/tokens.js';
import { tenantByHost, tenantBySlug, type TenantRef } from '../../src/tenants/resolve.js';

/**
 * Identifies every request once, before routing decisions: the bearer token (which decides the
 * tenant; answered from the credential cache when it may be, src/core/credential-cache.ts), or for
 * anonymous calls nothing yet — the tenant of an anonymous call is resolved from X-Helpdesk-Tenant
 * or Host only by routes that need one (see route.ts).
 */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

export async function resolveTenant(request: FastifyRequest, deps: Deps): Promise<TenantRef | null> {
  const header = request.headers['x-helpdesk-tenant'];
  const slug = Array.isArray(header) ? header[0] : header;
  if (slug) return tenantBySlug(deps.db, slug);
  const host = request.headers.host;
  const byHost = host ? await tenantByHost(deps.db, host, deps.config.baseDomain) : null;
  if (byHost) return byHost;
  // Opt-in convenience for single-tenant installs; off unless HELPDESK_DEFAULT_TENANT is set.
  return deps.config.defaultTenant ? tenantBySlug(deps.db, deps.config.defaultTenant) : null;
}

/** The identity of a request before its token is looked at: anonymous, at the moment it arrived. */
export function arrivalIdentity(now: Date = systemNow()): RequestIdentity {
  return { now, tenantId: null, actor: null, user: null, badToken: false };
}

/** `clock` tells when a request arrives (the wall clock; tests move it, see AppOptions.clock). */
export async function identifyPlugin(app: FastifyInstance, clock: Clock = systemNow): Promise<void> {
  app.decorateRequest('identity', null as never);
  app.addHook('onRequest', async (request) => {
    request.identity = arrivalIdentity(clock());
    const token = bearerToken(request);
    if (!token) return;
    const resolved = await resolveBearerToken(app.deps.db, token, request.identity.now, app.deps.credentials);
    if (resolved) {
      request.identity.tenantId = resolved.tenantId;
      request.identity.actor = resolved.actor;
      request.identity.user = resolved.user;
    } else {
      request.identity.badToken = true;
    }
  });
}
