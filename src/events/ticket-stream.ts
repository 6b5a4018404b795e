import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import type { EventFeed, FeedMessage } from './feed.js';
import { EventRecord } from './models.js';

/** Events per read; also the most one stream holds in memory beyond the socket's buffers. */
export const STREAM_PAGE_SIZE = 50;

/** A `seq` as the stream hands it out (bigint in the database; 18 digits always fit). */
const SEQ = /^[0-9]{1,18}$/;

export interface TicketStreamOptions {
  /** Resume after this `seq` (Last-Event-ID); without it the stream starts with what commits next. */
  lastEventId?: string | null;
  /** Which field the resume point came from, to name it in a validation problem. */
  lastEventIdField?: string;
}

/**
 * The live ticket stream of ctx's tenant (GET /tickets/stream): every committed event about a
 * ticket after the resume point, in `seq` order. It subscribes to the process's LISTEN connection
 * before reading where to start, so nothing committed in between is missed; per tenant, `seq`
 * order is visibility order (the publisher numbers committed events in serialised runs:
 * src/events/publisher.ts), so passing a `seq` never skips an event that becomes visible later.
 * Events not yet numbered are not on the stream; the publisher's NOTIFY wakes it when they are.
 */
export async function openTicketStream(ctx: Ctx, options: TicketStreamOptions = {}): Promise<EventFeed> {
  const resume = options.lastEventId ?? null;
  if (resume !== null && !SEQ.test(resume)) {
    throw errors.invalid(options.lastEventIdField ?? 'last_event_id', 'must be the id of a stream event (digits)');
  }
  let wake: () => void = () => undefined;
  const unsubscribe = ctx.deps.events.subscribe(ctx.tenantId, () => wake());
  let after: string;
  try {
    after = resume ?? (await latestSeq(ctx));
  } catch (error) {
    unsubscribe();
    throw error;
  }

  return {
    async next() {
      const rows = await EventRecord.scoped(ctx)
        .where('subject_type', 'ticket')
        .where('seq', '>', after)
        .orderBy('seq')
        .limit(STREAM_PAGE_SIZE + 1);
      const page = rows.slice(0, STREAM_PAGE_SIZE);
      if (page.length) after = page[page.length - 1]!.seq!;
      return { messages: page.map(toMessage), more: rows.length > STREAM_PAGE_SIZE };
    },
    onWake(fn) {
      wake = fn;
    },
    close: unsubscribe,
  };
}

/** The tenant's newest `seq` (0 when it has none): a fresh stream starts after it. */
async function latestSeq(ctx: Ctx): Promise<string> {
  const row = await EventRecord.scoped(ctx).max('seq as seq').first() as unknown as { seq: string | null } | undefined;
  return row?.seq ?? '0';
}

function toMessage(event: EventRecord): FeedMessage {
  return {
    id: event.seq!,
    event: event.type,
    data: {
      id: event.id,
      seq: Number(event.seq),
      type: event.type,
      ticket_id: event.ticket_id,
      from: event.from_value,
      to: event.to_value,
      actor_id: event.actor_id,
      actor_name: event.actor_name,
      data: event.data,
      created_at: event.created_at.toISOString(),
    },
  };
}
