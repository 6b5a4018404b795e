import t from 'tap';
import { randomUUID } from 'node:crypto';
import { apiKeyFixture, call, csrfToken, secondApp, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { baseUrlOf, openSse } from '../../helpers/sse.js';
import { registerRoute, route } from '../../../daemon/route.js';
import { TicketStreamEvent } from '../../../src/events/schemas.js';
import type { Config } from '../../../src/core/config.js';
import { SYSTEM_ACTOR } from '../../../src/core/context.js';
import { inTransaction } from '../../../src/db/transaction.js';
import { recordEvent, type NewEvent } from '../../../src/events/record.js';
import { STREAM_PAGE_SIZE } from '../../../src/events/ticket-stream.js';

/**
 * GET /tickets/stream over real sockets: events committed through one daemon are streamed by
 * another on the same database (each has its own LISTEN connection), in commit order, resumable,
 * per tenant, staff only, with heartbeats, bounded memory for a slow client and a clean shutdown.
 */
t.setTimeout(180_000);

const LONG: Partial<Config> = { streamMaxMs: 60_000, streamHeartbeatMs: 60_000 };

/** Commits one ticket event for the tenant through `deps` (as a ticket change would). */
function commitEvent(deps: TestEnv['deps'], tenantId: string, input: Partial<NewEvent> = {}) {
  const ticketId = randomUUID();
  return inTransaction(deps, { tenantId, actor: SYSTEM_ACTOR, now: new Date() }, (ctx) =>
    recordEvent(ctx, {
      type: 'ticket.status_changed', subjectType: 'ticket', ticketId, from: 'Open', to: 'Pending',
      data: { ticket_id: ticketId, from: 'Open', to: 'Pending' }, ...input,
    }));
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const settle = () => new Promise((r) => setTimeout(r, 300));

t.test('an event committed through one daemon is streamed by another, after commit, in order', async (t) => {
  const env = await testApp(t, LONG);
  const a = await tenantFixture(env);
  const other = await secondApp(t, env, LONG);
  const agent = await userFixture(env, a.id, 'agent');

  const stream = await openSse(other.url, '/tickets/stream', auth(agent.token));
  t.teardown(() => stream.close());
  t.equal(stream.status, 200);
  t.match(stream.headers['content-type'], /^text\/event-stream/);
  t.equal(stream.headers['cache-control'], 'no-cache');
  t.match(stream.text, /^retry: \d+\n\n/, 'a reconnection hint first');
  await stream.until(() => other.deps.events.listening, 5000, 'the listener');

  const earlier = await commitEvent(env.deps, a.id); // committed through the first daemon's pool
  const later = await commitEvent(env.deps, a.id, { type: 'ticket.priority_changed', from: 'Normal', to: 'Urgent', data: { x: 1 } });
  await commitEvent(env.deps, a.id, { type: 'customer.updated', subjectType: 'customer', ticketId: null, data: {} });
  await stream.until(() => stream.events.length >= 2, 5000, 'two events');
  await settle();

  t.equal(stream.events.length, 2, 'ticket events only, each once');
  const [first, second] = stream.events;
  t.equal(first!.event, 'ticket.status_changed', 'the SSE event name is the event type');
  const stored = await env.deps.db('events').where({ tenant_id: a.id, id: earlier.id }).first();
  t.equal(first!.id, String(stored.seq), 'the SSE id is the seq');
  t.same(first!.data, {
    id: earlier.id, seq: Number(stored.seq), type: 'ticket.status_changed', ticket_id: earlier.ticket_id,
    from: 'Open', to: 'Pending', actor_id: null, actor_name: 'System',
    data: { ticket_id: earlier.ticket_id, from: 'Open', to: 'Pending' }, created_at: earlier.created_at.toISOString(),
  });
  t.equal(second!.data.id, later.id);
  t.ok(Number(second!.id) > Number(first!.id), 'in commit order');
  t.same(env.guard.violations, []);
});

t.test('a rolled-back change streams nothing', async (t) => {
  const env = await testApp(t, LONG);
  const a = await tenantFixture(env);
  const stream = await openSse(await baseUrlOf(env.app), '/tickets/stream', auth(a.admin.token));
  t.teardown(() => stream.close());
  await stream.until(() => env.deps.events.listening, 5000, 'the listener');

  await t.rejects(inTransaction(env.deps, { tenantId: a.id, actor: SYSTEM_ACTOR, now: new Date() }, async (ctx) => {
    await recordEvent(ctx, { type: 'ticket.created', subjectType: 'ticket', ticketId: randomUUID(), data: { rolled: 'back' } });
    throw new Error('the change fails');
  }));
  const committed = await commitEvent(env.deps, a.id);
  await stream.until(() => stream.events.length >= 1, 5000, 'the committed event');
  await settle();
  t.same(stream.events.map((e) => e.data.id), [committed.id], 'only the committed change');
});

t.test('Last-Event-ID resumes with exactly the missed events', async (t) => {
  const env = await testApp(t, LONG);
  const a = await tenantFixture(env);
  const url = await baseUrlOf(env.app);

  const first = await openSse(url, '/tickets/stream', auth(a.admin.token));
  await first.until(() => env.deps.events.listening, 5000, 'the listener');
  const seen = await commitEvent(env.deps, a.id);
  await first.until(() => first.events.length === 1, 5000, 'the first event');
  first.close();
  const lastId = first.events[0]!.id!;
  t.equal(first.events[0]!.data.id, seen.id);

  const missed = [await commitEvent(env.deps, a.id), await commitEvent(env.deps, a.id), await commitEvent(env.deps, a.id)];

  const resumed = await openSse(url, '/tickets/stream', { ...auth(a.admin.token), 'last-event-id': lastId });
  t.teardown(() => resumed.close());
  await resumed.until(() => resumed.events.length >= 3, 5000, 'the missed events');
  const live = await commitEvent(env.deps, a.id);
  await resumed.until(() => resumed.events.length >= 4, 5000, 'the live event');
  await settle();
  t.same(resumed.events.map((e) => e.data.id), [...missed.map((e) => e.id), live.id], 'the missed ones, then live ones, nothing twice');

  // The query parameter does the same for clients that cannot send the header; the header wins.
  const byQuery = await openSse(url, `/tickets/stream?last_event_id=${lastId}`, auth(a.admin.token));
  t.teardown(() => byQuery.close());
  await byQuery.until(() => byQuery.events.length >= 4, 5000, 'the events after the query id');
  t.same(byQuery.events.map((e) => e.data.id), [...missed.map((e) => e.id), live.id]);
  const headerWins = await openSse(url, '/tickets/stream?last_event_id=0', { ...auth(a.admin.token), 'last-event-id': resumed.events[3]!.id! });
  t.teardown(() => headerWins.close());
  await settle();
  t.same(headerWins.events, [], 'the header wins over the query parameter');

  const bad = await call(env, 'GET', '/tickets/stream', { token: a.admin.token, headers: { 'last-event-id': 'abc' } });
  t.equal(bad.statusCode, 422);
  t.same(bad.json().details, [{ field: 'Last-Event-ID', message: 'must be the id of a stream event (digits)' }]);
  const tooBig = await call(env, 'GET', '/tickets/stream', { token: a.admin.token, query: { last_event_id: '9'.repeat(19) } });
  t.equal(tooBig.statusCode, 422);
  t.equal(tooBig.json().details[0].field, 'last_event_id');
});

t.test("another tenant's events never appear, even replayed from the start", async (t) => {
  const env = await testApp(t, LONG);
  const a = await tenantFixture(env);
  const b = await tenantFixture(env);
  const url = await baseUrlOf(env.app);
  const before = await commitEvent(env.deps, a.id, { data: { secret: 'tenant-a' } });

  const stream = await openSse(url, '/tickets/stream?last_event_id=0', auth(b.admin.token));
  t.teardown(() => stream.close());
  await stream.until(() => env.deps.events.listening, 5000, 'the listener');
  await commitEvent(env.deps, a.id, { data: { secret: 'tenant-a' } });
  const own = await commitEvent(env.deps, b.id);
  await stream.until(() => stream.events.length >= 1, 5000, "B's event");
  await settle();
  t.same(stream.events.map((e) => e.data.id), [own.id], "only B's own event");
  t.notMatch(stream.text, /tenant-a/);
  t.notMatch(stream.text, new RegExp(before.id));
  t.same(env.guard.violations, []);
});

t.test('staff only: customers, anonymous callers and keys without tickets:read are refused', async (t) => {
  const env = await testApp(t, LONG);
  const a = await tenantFixture(env);
  const customer = await userFixture(env, a.id, 'customer');
  const refused = await call(env, 'GET', '/tickets/stream', { token: customer.token });
  t.equal(refused.statusCode, 403);
  t.equal(refused.json().code, 'forbidden');
  t.equal((await call(env, 'GET', '/tickets/stream')).statusCode, 401);
  const { key } = await apiKeyFixture(env, a.id, a.admin.id, ['users:read']);
  const noScope = await call(env, 'GET', '/tickets/stream', { token: key });
  t.equal(noScope.statusCode, 403);
  t.same(noScope.json().details, { required_scope: 'tickets:read' });
  const { key: readKey } = await apiKeyFixture(env, a.id, a.admin.id, ['tickets:read']);
  const url = await baseUrlOf(env.app);
  const byKey = await openSse(url, '/tickets/stream', auth(readKey));
  t.equal(byKey.status, 200, 'an API key of a staff user with tickets:read may stream');
  byKey.close();
});

t.test('heartbeats keep the stream open; a revoked token ends it at the next one', async (t) => {
  const env = await testApp(t, { streamMaxMs: 60_000, streamHeartbeatMs: 100 });
  const a = await tenantFixture(env);
  const agent = await userFixture(env, a.id, 'agent');
  const stream = await openSse(await baseUrlOf(env.app), '/tickets/stream', auth(agent.token));
  t.teardown(() => stream.close());
  await stream.until(() => stream.comments.filter((c) => c === 'heartbeat').length >= 3, 3000, 'heartbeats');
  t.notOk(stream.isEnded());

  const logout = await call(env, 'POST', '/auth/logout', { token: agent.token, tenant: a.slug, csrf: await csrfToken(env, a.slug) });
  t.equal(logout.statusCode, 204);
  await stream.until(() => stream.isEnded(), 3000, 'the stream to end');
  t.pass('the stream ended once its session was revoked');
});

t.test('a stream ends after its lifetime', async (t) => {
  const env = await testApp(t, { streamMaxMs: 400, streamHeartbeatMs: 60_000 });
  const a = await tenantFixture(env);
  const started = Date.now();
  const stream = await openSse(await baseUrlOf(env.app), '/tickets/stream', auth(a.admin.token));
  await stream.ended;
  t.ok(Date.now() - started >= 350, 'not before');
  t.ok(Date.now() - started < 3000, 'not much after');
  t.equal(env.app.openStreams.size, 0, 'forgotten by the app');
});

t.test('closing the daemon ends its streams cleanly, and cuts a stalled one after a grace period', async (t) => {
  const env = await testApp(t, LONG);
  const a = await tenantFixture(env);
  // A backlog larger than the socket buffers, so the paused client really stalls its stream.
  const padding = 'x'.repeat(60_000);
  for (let i = 0; i < 200; i += 50) {
    await inTransaction(env.deps, { tenantId: a.id, actor: SYSTEM_ACTOR, now: new Date() }, async (ctx) => {
      for (let j = i; j < i + 50; j++) await recordEvent(ctx, { type: 'ticket.created', subjectType: 'ticket', ticketId: randomUUID(), data: { n: j, padding } });
    });
  }
  const other = await secondApp(t, env, LONG);
  const reading = await openSse(other.url, '/tickets/stream', auth(a.admin.token));
  const stalled = await openSse(other.url, '/tickets/stream?last_event_id=0', auth(a.admin.token));
  stalled.pause();
  await reading.until(() => other.app.openStreams.size === 2, 3000, 'both streams open');
  await settle();

  const started = Date.now();
  await other.app.close();
  const took = Date.now() - started;
  t.ok(took < 5000, `close() returned in ${took} ms`);
  await reading.ended;
  t.ok(reading.isEnded(), 'the reading client saw the end');
  t.equal(other.app.openStreams.size, 0);
  stalled.resume();
  await stalled.until(() => stalled.isEnded(), 5000, 'the stalled connection to be gone');
  t.ok(stalled.events.length < 200, `the stalled client was cut after ${stalled.events.length} of 200 events`);
});

t.test('the LISTEN connection is re-opened when it drops, and nothing is lost', async (t) => {
  const env = await testApp(t, LONG);
  const a = await tenantFixture(env);
  const stream = await openSse(await baseUrlOf(env.app), '/tickets/stream', auth(a.admin.token));
  t.teardown(() => stream.close());
  await stream.until(() => env.deps.events.listening, 5000, 'the listener');
  const pid = env.deps.events.backendPid;
  t.ok(pid, 'a backend pid');

  await env.deps.db.raw('select pg_terminate_backend(?)', [pid]);
  await stream.until(() => !env.deps.events.listening || env.deps.events.backendPid !== pid, 5000, 'the drop to be noticed');
  const during = await commitEvent(env.deps, a.id); // possibly before LISTEN is back: no notification for it
  await stream.until(() => env.deps.events.listening, 10_000, 'the listener to reconnect');
  t.not(env.deps.events.backendPid, pid, 'a new connection');
  const after = await commitEvent(env.deps, a.id);
  await stream.until(() => stream.events.length >= 2, 5000, 'both events');
  t.same(stream.events.map((e) => e.data.id), [during.id, after.id]);
});

t.test('a commit that starts first but becomes visible last is not skipped', async (t) => {
  const env = await testApp(t, LONG);
  const a = await tenantFixture(env);
  // A slow step at commit (a deferred trigger): the first transaction becomes visible last.
  await env.deps.db.raw(`
    CREATE FUNCTION test_slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.data->>'slow' IS NOT NULL THEN PERFORM pg_sleep(0.6); END IF; RETURN NULL; END $$;
    CREATE CONSTRAINT TRIGGER events_zz_slow AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION test_slow_commit();
  `);
  const stream = await openSse(await baseUrlOf(env.app), '/tickets/stream', auth(a.admin.token));
  t.teardown(() => stream.close());
  await stream.until(() => env.deps.events.listening, 5000, 'the listener');

  const slow = commitEvent(env.deps, a.id, { data: { slow: true } });
  await new Promise((r) => setTimeout(r, 150)); // the slow commit is under way
  const fast = commitEvent(env.deps, a.id, { data: { fast: true } });
  const fastEvent = await fast;
  await stream.until(() => stream.events.length >= 1, 5000, 'the fast event');
  const slowEvent = await slow;
  await stream.until(() => stream.events.length >= 2, 5000, 'both events');
  t.same(stream.events.map((e) => e.data.id), [fastEvent.id, slowEvent.id], 'both, in the order they became visible');
  t.ok(Number(stream.events[1]!.id) > Number(stream.events[0]!.id), 'the later-visible event has the higher seq');
});

t.test('a client that stops reading holds one page, not the backlog; it gets everything when it reads again', async (t) => {
  const env = await testApp(t, LONG);
  const a = await tenantFixture(env);
  const stream = await openSse(await baseUrlOf(env.app), '/tickets/stream', auth(a.admin.token));
  t.teardown(() => stream.close());
  await stream.until(() => env.deps.events.listening, 5000, 'the listener');
  stream.pause();
  const total = 400;
  const padding = 'x'.repeat(40_000);
  for (let i = 0; i < total; i += 50) {
    await inTransaction(env.deps, { tenantId: a.id, actor: SYSTEM_ACTOR, now: new Date() }, async (ctx) => {
      for (let j = i; j < i + 50; j++) await recordEvent(ctx, { type: 'ticket.created', subjectType: 'ticket', ticketId: randomUUID(), data: { n: j, padding } });
    });
  }
  await settle();
  const [server] = [...env.app.openStreams];
  // The socket buffers take some; the stream holds at most one page more than its high-water mark.
  const bound = server!.readableHighWaterMark + STREAM_PAGE_SIZE * 41_000;
  t.ok(server!.readableLength <= bound, `buffered ${server!.readableLength} bytes (bound ${bound})`);
  t.ok(stream.events.length < total, 'the stalled client has not taken everything');

  stream.resume();
  await stream.until(() => stream.events.length === total, 15_000, 'every event');
  t.same(stream.events.map((e) => e.data.data.n), [...Array(total).keys()], 'in order, none lost');
});

t.test('only a GET route can be declared a stream', async (t) => {
  const fake = { routeDefs: [], deps: {}, route: () => undefined } as never;
  t.throws(() => registerRoute(fake, route({
    method: 'POST', url: '/_probe/stream', access: { kind: 'public' }, summary: 'x', tags: ['probe'], schema: {},
    stream: { data: TicketStreamEvent, description: 'x' }, handler: async () => ({}),
  })), /only a GET route can answer with a stream/);
});
