import { Type } from '@sinclair/typebox';
import { STAFF, route } from '../route.js';
import { openTicketStream } from '../../src/events/ticket-stream.js';
import { TicketStreamEvent } from '../../src/events/schemas.js';

/** The live ticket stream (SPEC "Tickets": GET /tickets/stream; docs/api.md "Live ticket stream"). */
const StreamQuery = Type.Object({
  last_event_id: Type.Optional(Type.String({
    pattern: '^[0-9]{1,18}$', maxLength: 18,
    description: 'Resume after this event (for clients that cannot send the Last-Event-ID header); the header wins when both are sent',
  })),
}, { additionalProperties: false });

export const ticketStreamRoutes = [
  route({
    method: 'GET', url: '/tickets/stream', operationId: 'tickets.stream',
    access: { kind: 'token', scope: 'tickets:read', roles: STAFF },
    summary: 'Live stream of ticket changes (server-sent events)', tags: ['tickets'],
    schema: { querystring: StreamQuery },
    stream: {
      data: TicketStreamEvent,
      description: [
        'Every change to a ticket of the tenant, after it commits, as server-sent events: `id:` is the',
        "event's `seq`, `event:` its webhook name (`ticket.created`, `ticket.status_changed`, …), `data:`",
        'one JSON object (`TicketStreamEvent`). Without a resume point the stream starts with the next',
        'change; with `Last-Event-ID` (or `last_event_id`) it first replays every later event, so a',
        'reconnecting client misses nothing. A comment line (`: heartbeat`) comes every 15 seconds;',
        'the server ends a stream after 10 minutes (HELPDESK_STREAM_MAX_SECONDS) or when its token',
        'lapses, and the client reconnects with Last-Event-ID.',
      ].join(' '),
    },
    example: { query: { last_event_id: '0' } },
    handler: (ctx, { request, query }) => {
      const header = request.headers['last-event-id'];
      const fromHeader = (Array.isArray(header) ? header[0] : header)?.trim() || null;
      return openTicketStream(ctx, fromHeader !== null
        ? { lastEventId: fromHeader, lastEventIdField: 'Last-Event-ID' }
        : { lastEventId: query.last_event_id ?? null, lastEventIdField: 'last_event_id' });
    },
  }),
];
