import { STAFF, route } from '../route.js';
import { ListOf, PageQuery } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { createSubscription, deleteSubscription, listSubscriptions, vapidPublicKey } from '../../src/push/subscriptions.js';
import { PushSubscriptionCreate, PushSubscriptionOut, VapidPublicKey } from '../../src/push/schemas.js';

/** Browser push (CONTRACT §14): the instance's VAPID key and the caller's own subscriptions. */
const tags = ['push'];
const access = { kind: 'token', roles: STAFF } as const;

export const pushRoutes = [
  route({
    method: 'GET', url: '/push/vapid-public-key', access, summary: 'The VAPID public key to subscribe a browser with', tags,
    schema: { response: { 200: VapidPublicKey } },
    handler: async (ctx) => vapidPublicKey(ctx),
  }),
  route({
    method: 'POST', url: '/push/subscriptions', access, summary: 'Subscribe one of the caller\'s browsers to push notifications', tags,
    errors: ['forbidden'],
    schema: { body: PushSubscriptionCreate, response: { 201: PushSubscriptionOut } }, status: 201,
    example: { body: {
      endpoint: 'https://push.example.com/send/abc123',
      keys: { p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM', auth: 'tBHItJI5svbpez7KI4CCXg' },
    } },
    handler: (ctx, { body }) => createSubscription(ctx, body),
  }),
  route({
    method: 'GET', url: '/push/subscriptions', access, summary: 'The caller\'s push subscriptions', tags,
    errors: ['forbidden'],
    schema: { querystring: PageQuery, response: { 200: ListOf(PushSubscriptionOut) } },
    handler: (ctx, { query }) => listSubscriptions(ctx, query),
  }),
  route({
    method: 'DELETE', url: '/push/subscriptions/:id', access, summary: 'Remove one of the caller\'s push subscriptions', tags,
    errors: ['forbidden'],
    status: 204,
    schema: { params: IdParams },
    handler: (ctx, { params }) => deleteSubscription(ctx, params.id),
  }),
];
