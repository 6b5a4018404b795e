import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Cross-origin access for the chat widget: the visitor API is called by pages on the customer's
 * own site. Preflights (OPTIONS) on the visitor paths answer 204 with what a browser needs; the
 * actual answers echo the caller's Origin. This grants no access by itself: a conversation starts
 * only from an origin in the widget's `allowed_origins`, and later calls carry the visitor token
 * and are refused from any other origin (src/webchat/visitors.ts). No cookies are involved, so
 * credentials are not allowed.
 */
const VISITOR_PATH = /^\/api\/v1\/webchat\/(?:visitor\/[a-z]+|widgets\/[^/?]+\/conversations)\/?(?:\?|$)/;

function allowOrigin(request: FastifyRequest, reply: FastifyReply): void {
  const origin = request.headers.origin;
  if (!origin) return;
  reply.header('Access-Control-Allow-Origin', origin);
  reply.header('Vary', 'Origin');
  reply.header('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id');
}

export function webchatCorsPlugin(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!VISITOR_PATH.test(request.url)) return;
    allowOrigin(request, reply);
    // A CORS preflight is an OPTIONS with Access-Control-Request-Method; any other OPTIONS is
    // what it always was (no such route).
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method']) {
      reply.header('Access-Control-Allow-Methods', 'GET, POST');
      reply.header('Access-Control-Allow-Headers', 'Authorization, Content-Type, Last-Event-ID');
      reply.header('Access-Control-Max-Age', '600');
      return reply.code(204).send();
    }
  });
}
