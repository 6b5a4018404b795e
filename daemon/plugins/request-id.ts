import type { FastifyInstance, RawRequestDefaultExpression } from 'fastify';
import { uuidv7 } from '../../src/core/ids.js';

/** X-Request-Id: echoed when the client sent a sane one, else a new UUID; on every response. */
export function requestIdFrom(raw: RawRequestDefaultExpression): string {
  const sent = raw.headers['x-request-id'];
  const value = Array.isArray(sent) ? sent[0] : sent;
  return value && /^[\w.:@/+=-]{1,200}$/.test(value) ? value : uuidv7();
}

export function requestIdPlugin(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', String(request.id));
  });
}
