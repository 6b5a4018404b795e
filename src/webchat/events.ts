import type { Knex } from 'knex';
import type { Ctx, Deps } from '../core/context.js';
import { errors } from '../core/errors.js';
import { uuidv7 } from '../core/ids.js';
import type { EventFeed, FeedMessage } from '../events/feed.js';
import type { EventListener } from '../events/listener.js';

/**
 * The live side of web chat: `webchat_events` rows written in the transaction of the change
 * (ARCHITECTURE rule 3), numbered and announced at commit (the migration's trigger NOTIFYs the
 * same `helpdesk_events` channel as the event store), and read by two kinds of stream, both
 * served by daemon/sse.ts like the ticket stream (heartbeats, lifetime, backpressure):
 *
 * - the console stream (staff): every `staff` event of the tenant after the resume point;
 * - a visitor's stream: the `visitor` events of one conversation.
 *
 * Thousands of visitor streams may be open in one process. Waking each of them on every event of
 * the tenant would cost one query per stream per event, so a process keeps one `VisitorHub` per
 * tenant: on a wake it reads the new visitor events once and wakes only the streams of the
 * conversations they belong to. Every stream still reads its own events from the table (after the
 * last `seq` it sent), so a missed wake costs at most a delay, never an event.
 */
export type Audience = 'staff' | 'visitor';
export const STREAM_PAGE_SIZE = 50;
const SEQ = /^[0-9]{1,18}$/;

interface EventRow {
  tenant_id: string; id: string; seq: string | null; audience: Audience; type: string;
  conversation_id: string | null; data: Record<string, unknown>; created_at: Date;
}

/** Appends one live event in ctx's transaction. */
export async function emitChatEvent(ctx: Ctx, audience: Audience, type: string, conversationId: string | null, data: Record<string, unknown>): Promise<string> {
  const id = uuidv7(ctx.now.getTime());
  await ctx.trx('webchat_events').insert({
    tenant_id: ctx.tenantId, id, audience, type, conversation_id: conversationId, data: JSON.stringify(data), created_at: ctx.now,
  });
  return id;
}

function toMessage(row: EventRow): FeedMessage {
  return { id: row.seq!, event: row.type, data: row.data };
}

function checkResume(value: string | null, field: string): void {
  if (value !== null && !SEQ.test(value)) throw errors.invalid(field, 'must be the id of a stream event (digits)');
}

export interface ResumePoint { lastEventId: string | null; field: string }

/** The console's stream (GET /webchat/stream): staff events of ctx's tenant after the resume point. */
export async function openConsoleStream(ctx: Ctx, resume: ResumePoint): Promise<EventFeed> {
  checkResume(resume.lastEventId, resume.field);
  let wake: () => void = () => undefined;
  const unsubscribe = ctx.deps.events.subscribe(ctx.tenantId, () => wake());
  let after: string;
  try {
    after = resume.lastEventId ?? await latestSeq(ctx.deps.db, ctx.tenantId);
  } catch (error) {
    unsubscribe();
    throw error;
  }
  return {
    async next() {
      const rows = await ctx.deps.db<EventRow>('webchat_events')
        .where({ tenant_id: ctx.tenantId, audience: 'staff' }).where('seq', '>', after)
        .orderBy('seq').limit(STREAM_PAGE_SIZE + 1);
      const page = rows.slice(0, STREAM_PAGE_SIZE);
      if (page.length) after = page[page.length - 1]!.seq!;
      return { messages: page.map(toMessage), more: rows.length > STREAM_PAGE_SIZE };
    },
    onWake(fn) { wake = fn; },
    close: unsubscribe,
  };
}

async function latestSeq(db: Knex, tenantId: string): Promise<string> {
  const row = await db('webchat_events').where('tenant_id', tenantId).max('seq as seq').first() as { seq: string | null } | undefined;
  return row?.seq ?? '0';
}

/** Per process and tenant: one reader of new visitor events that wakes the affected streams only. */
class VisitorHub {
  private readonly byConversation = new Map<string, Set<() => void>>();
  private cursor: string | null = null;
  private reading = false;
  private again = false;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly deps: Deps, private readonly tenantId: string, private readonly onEmpty: () => void) {}

  async add(conversationId: string, wake: () => void): Promise<() => void> {
    if (!this.unsubscribe) {
      this.unsubscribe = this.deps.events.subscribe(this.tenantId, () => void this.read());
      this.cursor = await latestSeq(this.deps.db, this.tenantId);
    }
    const set = this.byConversation.get(conversationId) ?? new Set();
    set.add(wake);
    this.byConversation.set(conversationId, set);
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      set.delete(wake);
      if (!set.size && this.byConversation.get(conversationId) === set) this.byConversation.delete(conversationId);
      if (!this.byConversation.size) {
        this.unsubscribe?.();
        this.unsubscribe = null;
        this.onEmpty();
      }
    };
  }

  private async read(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        if (this.cursor === null) break;
        const rows = await this.deps.db<EventRow>('webchat_events').select('seq', 'conversation_id')
          .where({ tenant_id: this.tenantId, audience: 'visitor' }).where('seq', '>', this.cursor)
          .orderBy('seq').limit(1000);
        if (rows.length) this.cursor = rows[rows.length - 1]!.seq!;
        if (rows.length === 1000) this.again = true;
        const woken = new Set<string>();
        for (const row of rows) {
          if (!row.conversation_id || woken.has(row.conversation_id)) continue;
          woken.add(row.conversation_id);
          for (const wake of [...(this.byConversation.get(row.conversation_id) ?? [])]) wake();
        }
      } while (this.again);
    } catch (error) {
      this.deps.log.warn({ err: error }, 'web chat visitor hub read failed');
      // Wake everyone: each stream reads its own events, so nothing is lost.
      for (const set of this.byConversation.values()) for (const wake of [...set]) wake();
    } finally {
      this.reading = false;
    }
  }
}

const hubs = new WeakMap<EventListener, Map<string, VisitorHub>>();

function hubFor(deps: Deps, tenantId: string): VisitorHub {
  let perTenant = hubs.get(deps.events);
  if (!perTenant) hubs.set(deps.events, (perTenant = new Map()));
  let hub = perTenant.get(tenantId);
  if (!hub) {
    const map = perTenant;
    hub = new VisitorHub(deps, tenantId, () => map.delete(tenantId));
    perTenant.set(tenantId, hub);
  }
  return hub;
}

/**
 * A visitor's stream of their conversation: `message`, `agent_joined`, `ended`. Without a resume
 * point it replays the conversation from its start (the widget rebuilds its view from the
 * stream alone); with Last-Event-ID it continues after that event.
 */
export async function openVisitorStream(ctx: Ctx, conversationId: string, resume: ResumePoint): Promise<EventFeed> {
  checkResume(resume.lastEventId, resume.field);
  let after = resume.lastEventId ?? '0';
  let wake: () => void = () => undefined;
  const remove = await hubFor(ctx.deps, ctx.tenantId).add(conversationId, () => wake());
  const db = ctx.deps.db;
  const tenantId = ctx.tenantId;
  return {
    async next() {
      const rows = await db<EventRow>('webchat_events')
        .where({ tenant_id: tenantId, conversation_id: conversationId, audience: 'visitor' }).where('seq', '>', after)
        .orderBy('seq').limit(STREAM_PAGE_SIZE + 1);
      const page = rows.slice(0, STREAM_PAGE_SIZE);
      if (page.length) after = page[page.length - 1]!.seq!;
      return { messages: page.map(toMessage), more: rows.length > STREAM_PAGE_SIZE };
    },
    onWake(fn) { wake = fn; },
    close: remove,
  };
}

/** The visitor-visible messages of a conversation, oldest first (the `message` events). */
export async function conversationMessages(ctx: Ctx, conversationId: string, limit: number): Promise<Record<string, unknown>[]> {
  const rows = await scopedEvents(ctx).where({ conversation_id: conversationId, audience: 'visitor', type: 'message' })
    .orderBy('created_at').orderBy('id').limit(limit);
  return rows.map((row) => row.data);
}

function scopedEvents(ctx: Ctx) {
  return ctx.trx<EventRow>('webchat_events').where('tenant_id', ctx.tenantId);
}
