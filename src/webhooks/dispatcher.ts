import type { Deps } from '../core/context.js';
import { nextAttemptAfter } from './ladder.js';
import { envelopeBody, WebhookSender, type AttemptResult } from './sender.js';

/**
 * The dispatcher (SPEC "Delivery rules", CONTRACT §6): claims due deliveries of every tenant,
 * sends them, records the outcome and schedules the retry ladder.
 *
 * - **Claim**: one statement picks the oldest due rows (`FOR UPDATE SKIP LOCKED`, so dispatchers
 *   in other daemons take other rows), stamps each with a new `attempt_id` and moves
 *   `next_attempt_at` a lease ahead, and commits. Until the lease runs out no other dispatcher
 *   sees the row as due, so one attempt is never sent twice.
 * - **Crash**: a dispatcher killed between claim and record leaves the row due again when the
 *   lease runs out; the next claim re-sends the same event id (at-least-once, never lost).
 * - **Record**: only while the row still carries this attempt's `attempt_id`, so a dispatcher
 *   that outlived its lease cannot overwrite a newer attempt or a manual retry.
 * - **Fairness**: at most `perEndpoint` attempts per endpoint in flight, `concurrency` in all; the
 *   claim skips saturated endpoints, so one slow receiver holds only its own slots.
 */
export interface DispatchOptions {
  /** Attempts in flight at once, over all endpoints. */
  concurrency?: number;
  /** Attempts in flight at once to one endpoint. */
  perEndpoint?: number;
  /** Rows claimed per statement. */
  batchSize?: number;
  /** How long a claim keeps a row from other dispatchers; longer than an attempt can take. */
  leaseMs?: number;
  /** The HTTP side (tests and the benchmark pass their own; default: one per dispatcher). */
  sender?: WebhookSender;
}

export interface DispatchTotals {
  attempted: number;
  delivered: number;
  failed: number;
  dead: number;
}

export const LEASE_MS = 60_000;

interface Claimed {
  tenant_id: string;
  id: string;
  endpoint_id: string;
  event_id: string;
  event: string;
  attempt: number;
  attempt_id: string;
  url: string;
  secret_enc: string;
  headers: Record<string, string>;
  event_created_at: Date;
  data: Record<string, unknown>;
}

export class Dispatcher {
  private readonly concurrency: number;
  private readonly perEndpoint: number;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly sender: WebhookSender;
  private readonly ownsSender: boolean;
  private poked: (() => void) | null = null;
  /** Decrypted secrets of this drain, by their stored form (a rotation stores a new one). */
  private readonly secrets = new Map<string, string>();
  private pokedSince = false;

  constructor(private readonly deps: Deps, options: DispatchOptions = {}) {
    this.concurrency = options.concurrency ?? 64;
    this.perEndpoint = options.perEndpoint ?? 8;
    this.batchSize = options.batchSize ?? 100;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
    this.ownsSender = !options.sender;
    this.sender = options.sender ?? new WebhookSender({ allowPrivate: deps.config.webhooksAllowPrivate, connectionsPerOrigin: this.perEndpoint });
  }

  /**
   * Claims and sends until nothing is due at `clock()` and nothing is in flight. The job passes a
   * fixed (possibly simulated) time; the serve loop passes the wall clock.
   */
  async drain(clock: () => Date): Promise<DispatchTotals> {
    const totals: DispatchTotals = { attempted: 0, delivered: 0, failed: 0, dead: 0 };
    const busy = new Map<string, number>();
    let active = 0;
    let completed = 0;
    let wake: (() => void) | null = null;
    const settled = () => new Promise<void>((resolve) => (wake = this.poked = resolve));

    // Claim again once a good part of the capacity is free: one claim statement per few
    // attempts, not one per completed attempt.
    const lowWater = Math.max(1, Math.floor(Math.min(this.batchSize, this.concurrency) / 4));
    const recorder = new Recorder(this.deps);
    this.secrets.clear();
    try {
      for (;;) {
        let claimed: Claimed[] = [];
        this.pokedSince = false; // a poke from here on makes the wait below end early
        const room = Math.min(this.batchSize, this.concurrency - active);
        if (room > 0) claimed = await this.claim(clock(), room, busy);
        for (const row of claimed) {
          active++;
          busy.set(row.endpoint_id, (busy.get(row.endpoint_id) ?? 0) + 1);
          totals.attempted++;
          void this.attempt(row, clock, recorder)
            .then((outcome) => { totals[outcome]++; })
            .catch((error) => this.deps.log.error({ err: error, delivery: row.id }, 'webhook attempt could not be recorded'))
            .finally(() => {
              active--;
              completed++;
              const left = (busy.get(row.endpoint_id) ?? 1) - 1;
              if (left) busy.set(row.endpoint_id, left);
              else busy.delete(row.endpoint_id);
              const resolve = wake;
              wake = null;
              resolve?.();
            });
        }
        // A full batch: more may be due. Otherwise wait until enough slots are free (that may
        // also unblock an endpoint that was saturated), or stop when nothing is in flight.
        if (claimed.length === room && room > 0) continue;
        if (active === 0) return totals;
        const target = completed + Math.max(1, Math.min(lowWater, Math.ceil(active / 2)));
        while (active > 0 && completed < target && !this.pokedSince) await settled();
      }
    } finally {
      await recorder.flush();
    }
  }

  private secretOf(stored: string): string {
    let secret = this.secrets.get(stored);
    if (secret === undefined) this.secrets.set(stored, (secret = this.deps.box.decrypt(stored)));
    return secret;
  }

  /**
   * New work may be due (a NOTIFY arrived): a drain waiting for attempts in flight claims again at
   * once instead of after them, so a hanging receiver never delays other endpoints' new events.
   */
  poke(): void {
    this.pokedSince = true;
    const resolve = this.poked;
    this.poked = null;
    resolve?.();
  }

  private async claim(now: Date, limit: number, busy: Map<string, number>): Promise<Claimed[]> {
    const result = await this.deps.db.raw(
      `/* cross-tenant: the dispatcher claims due deliveries of every tenant */
      WITH due AS (
        SELECT d.tenant_id, d.id, d.endpoint_id, d.next_attempt_at
        FROM webhook_deliveries d
        JOIN webhook_endpoints e ON e.tenant_id = d.tenant_id AND e.id = d.endpoint_id AND e.active
        WHERE d.status IN ('pending', 'failed') AND d.next_attempt_at <= :now
          AND NOT (d.endpoint_id = ANY(CAST(:saturated AS uuid[])))
        ORDER BY d.next_attempt_at, d.id
        LIMIT :scan
        FOR UPDATE OF d SKIP LOCKED
      ), ranked AS (
        SELECT tenant_id, id, next_attempt_at,
               row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, id) AS rn,
               :perEndpoint - coalesce(CAST(CAST(:busy AS jsonb) ->> CAST(endpoint_id AS text) AS integer), 0) AS room
        FROM due
      ), picked AS (
        SELECT tenant_id, id FROM ranked WHERE rn <= room ORDER BY next_attempt_at, id LIMIT :limit
      )
      UPDATE webhook_deliveries d
      SET attempt = d.attempt + 1, attempt_id = gen_random_uuid(), next_attempt_at = :leaseUntil, updated_at = :now
      FROM picked, webhook_endpoints e, events ev
      WHERE d.tenant_id = picked.tenant_id AND d.id = picked.id
        AND e.tenant_id = d.tenant_id AND e.id = d.endpoint_id
        AND ev.tenant_id = d.tenant_id AND ev.id = d.event_id
      RETURNING d.tenant_id, d.id, d.endpoint_id, d.event_id, d.event, d.attempt, d.attempt_id,
                e.url, e.secret_enc, e.headers, ev.created_at AS event_created_at, ev.data`,
      {
        now,
        // Rows locked but not picked (beyond an endpoint's room) are released at once.
        scan: limit * 2,
        saturated: [...busy].filter(([, n]) => n >= this.perEndpoint).map(([id]) => id),
        perEndpoint: this.perEndpoint,
        busy: JSON.stringify(Object.fromEntries(busy)),
        limit,
        leaseUntil: new Date(now.getTime() + this.leaseMs),
      },
    );
    return result.rows as Claimed[];
  }

  private async attempt(row: Claimed, clock: () => Date, recorder: Recorder): Promise<'delivered' | 'failed' | 'dead'> {
    let result: AttemptResult;
    try {
      const body = envelopeBody({ id: row.event_id, event: row.event, created_at: row.event_created_at.toISOString(), tenant_id: row.tenant_id, data: row.data });
      result = await this.sender.send({
        url: row.url, secret: this.secretOf(row.secret_enc), event: row.event, attemptId: row.attempt_id, body, staticHeaders: row.headers ?? {},
      });
    } catch (error) {
      result = { delivered: false, status_code: null, latency_ms: 0, error: `internal: ${(error as Error).message}`.slice(0, 500) };
    }
    const now = clock();
    const next = result.delivered ? null : nextAttemptAfter(row.attempt, now);
    const status = result.delivered ? 'delivered' : next ? 'failed' : 'dead';
    await recorder.record({
      tenant_id: row.tenant_id, id: row.id, attempt_id: row.attempt_id, status, next_attempt_at: next,
      status_code: result.status_code, latency_ms: result.latency_ms, error: result.error, delivered_at: result.delivered ? now : null, updated_at: now,
    });
    return status;
  }

  async close(): Promise<void> {
    if (this.ownsSender) await this.sender.close();
  }
}

interface Outcome {
  tenant_id: string;
  id: string;
  attempt_id: string;
  status: 'delivered' | 'failed' | 'dead';
  next_attempt_at: Date | null;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  delivered_at: Date | null;
  updated_at: Date;
}

/**
 * Writes attempt outcomes in batches: one UPDATE … FROM (VALUES …) for the outcomes of the last few
 * milliseconds instead of one statement per attempt. An outcome's promise resolves once its row is
 * written, so the dispatcher counts only what is recorded. Each row is written only while it still
 * carries the attempt's `attempt_id`.
 */
class Recorder {
  private queue: Array<{ outcome: Outcome; done: () => void; failed: (error: unknown) => void }> = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly writing = new Set<Promise<void>>();

  constructor(private readonly deps: Deps, private readonly maxBatch = 100, private readonly delayMs = 2) {}

  record(outcome: Outcome): Promise<void> {
    return new Promise((done, failed) => {
      this.queue.push({ outcome, done, failed });
      if (this.queue.length >= this.maxBatch) void this.flush();
      else this.timer ??= setTimeout(() => void this.flush(), this.delayMs);
    });
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.queue.splice(0);
    if (batch.length) {
      // Batches are written side by side: each touches its own rows.
      const write = this.write(batch).finally(() => this.writing.delete(write));
      this.writing.add(write);
    }
    await Promise.all([...this.writing]);
  }

  private async write(batch: Recorder['queue']): Promise<void> {
    const values = batch.map(() => '(?::uuid, ?::uuid, ?::uuid, ?, ?::timestamptz, ?::integer, ?::integer, ?, ?::timestamptz, ?::timestamptz)').join(', ');
    const bindings = batch.flatMap(({ outcome: o }) => [
      o.tenant_id, o.id, o.attempt_id, o.status, o.next_attempt_at, o.status_code, o.latency_ms, o.error, o.delivered_at, o.updated_at,
    ]);
    try {
      await this.deps.db.raw(
        `UPDATE webhook_deliveries d
         SET status = v.status, next_attempt_at = v.next_attempt_at, status_code = v.status_code, latency_ms = v.latency_ms,
             error = v.error, delivered_at = v.delivered_at, updated_at = v.updated_at
         FROM (VALUES ${values}) AS v(tenant_id, id, attempt_id, status, next_attempt_at, status_code, latency_ms, error, delivered_at, updated_at)
         WHERE d.tenant_id = v.tenant_id AND d.id = v.id AND d.attempt_id = v.attempt_id`,
        bindings,
      );
      for (const entry of batch) entry.done();
    } catch (error) {
      // The rows stay claimed; their lease runs out and they are sent again (at-least-once).
      for (const entry of batch) entry.failed(error);
    }
  }
}

/** The `webhook-dispatch` job: one drain at `now` (simulated with `helpdesk jobs run --now`). */
export async function dispatchDue(deps: Deps, now: Date): Promise<Record<string, number>> {
  const dispatcher = new Dispatcher(deps);
  try {
    return { ...(await dispatcher.drain(() => now)) };
  } finally {
    await dispatcher.close();
  }
}
