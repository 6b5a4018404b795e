import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Knex } from 'knex';
import type { RowDataPacket } from 'mysql2/promise';
import type { Actor, Ctx, Deps } from '../core/context.js';
import { uuidv7 } from '../core/ids.js';
import { inTransaction } from '../db/transaction.js';
import { withSessionLock } from '../db/session-lock.js';
import { scoped } from '../db/tenant-scope.js';
import { recordEvent, recordEvents, type NewEvent } from '../events/record.js';
import { publishEvents } from '../events/publisher.js';
import { OrganizationRecord, TeamRecord, UserRecord } from '../directory/models.js';
import { blobStoreFor } from '../storage/store.js';
import { sanitizeBodyHtml } from '../tickets/sanitize.js';
import { htmlToText } from '../conversation/html.js';
import { nextTicketNumber, reserveTicketNumbersThrough } from '../tickets/numbering.js';
import { Attachment, Message, Ticket, type Channel } from '../tickets/models.js';
import { TicketCollaborator } from '../tickets/ops-models.js';
import { CustomField, Priority, Status, TicketType } from '../vocab/models.js';
import { SYSTEM, mappedId, mappedIds, remember, type LegacyKind } from './map.js';
import { batches, openSource, probe, wallTimeToDate, type LegacySource } from './source.js';

/**
 * The osTicket import (CONTRACT §12): reads the source in id order, batch by batch, and writes each
 * batch in one transaction marked `quiet` (no webhook, mail, push, SLA or routing reacts). Every row
 * is written together with its entry in the legacy id map, inside a savepoint: a row that fails is
 * reported in `errors` and the batch goes on; a row already mapped is counted in `skipped`. So a
 * re-run creates nothing new and a killed run resumes where its last committed batch ended.
 */
export const RESULT_KEYS = ['teams', 'agents', 'organizations', 'customers', 'ticket_types', 'tickets', 'messages', 'notes', 'attachments'] as const;
export type ResultKey = typeof RESULT_KEYS[number];

export interface ImportError { kind: string; legacy_id: string; message: string }
export interface ImportResult {
  dry_run: boolean;
  counts: Record<ResultKey, number>;
  skipped: Record<ResultKey, number>;
  errors: ImportError[];
}

export interface ImportOptions {
  source: string;
  /** The time zone the source's DATETIME columns are written in (osTicket writes server time). */
  timezone?: string;
  dryRun?: boolean;
  /** Where filesystem-backed attachments (osTicket's storage-fs plugin) live. */
  attachmentsDir?: string;
  batchSize?: number;
  /**
   * Rows per batch of thread entries: many and small, they go faster in larger batches (2,000 by
   * default; `batchSize` when only that is given).
   */
  entryBatchSize?: number;
  /**
   * Batches of tickets and thread entries written side by side, each in its own transaction on its
   * own connection (3 by default: PostgreSQL then works on every core while this process builds the
   * next batch; measured on 2 cores, 2 gave 776 tickets/s, 3 gave 862, 4 gave 808). Every batch
   * checks the map for itself, so the order they commit in does not matter.
   */
  parallel?: number;
  /** Called once the source is recognised, with its row counts (the totals of a progress view). */
  onStart?: (totals: Record<string, number>) => void;
  /** Called after every batch with the result so far (the CLI's progress view). */
  onProgress?: (phase: string, result: ImportResult) => void | Promise<void>;
}

/** At most this many errors are listed; the rest are only counted in the log. */
const MAX_ERRORS = 1000;

function emptyCounts(): Record<ResultKey, number> {
  return Object.fromEntries(RESULT_KEYS.map((k) => [k, 0])) as Record<ResultKey, number>;
}

/** A multi-row INSERT into a tenant-owned table without reading the rows back (bulk paths). */
async function insertRows(ctx: Ctx, table: string, rows: Array<Record<string, unknown>>): Promise<void> {
  await ctx.trx(table).insert(rows.map((row) => ({ ...row, tenant_id: ctx.tenantId })));
}

type EntryRow = {
  id: string; ticket_id: string; body: string; body_html: string | null; is_private: boolean;
  author_id: string | null; author_name: string; is_agent: boolean; channel: Channel; created_at: Date;
};

/**
 * A batch of thread entries and their map rows in one statement: each column goes as one array
 * parameter (unnest), so thousands of rows are one round trip with a dozen parameters, and both
 * INSERTs succeed or fail together.
 */
async function insertEntries(trx: Ctx['trx'], ctx: Ctx, built: Array<{ r: RowDataPacket; row: EntryRow }>): Promise<void> {
  const col = <K extends keyof EntryRow>(key: K) => built.map((b) => b.row[key]);
  await trx.raw(`
    WITH entries AS (
      INSERT INTO messages (tenant_id, id, ticket_id, body, body_html, is_private, author_id, author_name, is_agent, channel, created_at)
      SELECT ?::uuid, * FROM unnest(?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::boolean[], ?::uuid[], ?::text[], ?::boolean[], ?::text[], ?::timestamptz[])
    )
    INSERT INTO legacy_import_map (tenant_id, system, kind, legacy_id, target_id, created_at)
    SELECT ?::uuid, ?, 'message', legacy_id, target_id, ?::timestamptz FROM unnest(?::text[], ?::uuid[]) AS u (legacy_id, target_id)`, [
    ctx.tenantId, col('id'), col('ticket_id'), col('body'), col('body_html'), col('is_private'), col('author_id'), col('author_name'),
    col('is_agent'), col('channel'), col('created_at'),
    ctx.tenantId, SYSTEM, ctx.now, built.map((b) => String(b.r.id)), col('id'),
  ] as Knex.RawBinding[]);
}

type Unit = <T>(fn: (ctx: Ctx) => Promise<T>) => Promise<T>;

export async function runLegacyImport(deps: Deps, tenantId: string, actor: Actor, now: Date, options: ImportOptions): Promise<ImportResult> {
  const source = await openSource(options.source, options.timezone ?? 'UTC');
  try {
    const { counts: totals } = await probe(source);
    options.onStart?.(totals);
    const result: ImportResult = { dry_run: Boolean(options.dryRun), counts: emptyCounts(), skipped: emptyCounts(), errors: [] };
    if (!options.dryRun) {
      // One run of one tenant at a time: a run started beside another waits for it, then finds every
      // row it imported in the map and creates nothing. The lock is held on a connection of its own,
      // so the run's batches can be written on several connections side by side.
      await withSessionLock(deps.db, `legacy-import:${tenantId}`, true, async () => {
        const unit: Unit = (fn) => inTransaction(deps, { tenantId, actor, now, quiet: true }, async (ctx) => {
          // A batch's commit does not wait for its WAL flush: a server crash may lose the last
          // batches, but each loses its rows and their map entries together, so the next run
          // imports them again. Consistency is kept; only the flush wait per batch is saved.
          await ctx.trx.raw('SET LOCAL synchronous_commit = off');
          return fn(ctx);
        });
        try {
          await new Importer(source, unit, result, options, options.parallel ?? 3, () => publishEvents(deps, tenantId)).run();
        } finally {
          // The quiet batches leave their events unnumbered (Ctx.quiet): one publisher run numbers
          // what is left, even when the run failed half-way (its committed batches stay).
          await publishEvents(deps, tenantId);
        }
      });
      return result;
    }
    // A dry run does everything in one transaction and rolls it back: its counts are exact, and
    // later entities find the earlier ones they refer to. No file is written to the blob store.
    const trx = await deps.db.transaction();
    try {
      const ctx: Ctx = { tenantId, actor, trx, now, deps, requestId: null, ip: null, afterCommit: () => undefined, quiet: true };
      // One transaction: its batches go one after the other.
      await new Importer(source, (fn) => fn(ctx), result, options, 1, async () => undefined).run();
    } finally {
      await trx.rollback().catch(() => undefined);
    }
    return result;
  } finally {
    await source.close();
  }
}

const PRIORITY_KEYS: Record<string, string> = { low: 'low', normal: 'normal', high: 'high', emergency: 'urgent' };

class Importer {
  private readonly size: number;
  private readonly entrySize: number;
  constructor(
    private readonly src: LegacySource,
    private readonly unit: Unit,
    private readonly result: ImportResult,
    private readonly options: ImportOptions,
    /** Batches of the large phases (tickets, thread entries) in flight at once. */
    private readonly parallel: number,
    /** Numbers the events the quiet batches committed (once a phase has written them). */
    private readonly publish: () => Promise<void>,
  ) {
    this.size = options.batchSize ?? 500;
    this.entrySize = options.entryBatchSize ?? options.batchSize ?? 2000;
  }

  private t(name: string): string {
    return this.src.table(name);
  }

  private date(value: unknown): Date | null {
    return wallTimeToDate(value === null || value === undefined ? null : String(value), this.src.timezone);
  }

  private async rows(sql: string, params: unknown[] = []): Promise<RowDataPacket[]> {
    const [rows] = await this.src.conn.query<RowDataPacket[]>(sql, params);
    return rows;
  }

  private async hasTable(name: string): Promise<boolean> {
    const rows = await this.rows('SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?', [`${this.src.prefix}${name}`]);
    return rows.length > 0;
  }

  /**
   * One legacy row: skipped when mapped, else `create` runs in a savepoint and must return the new
   * (or reused) id; a failure becomes an entry of `errors` and leaves nothing of that row.
   */
  private async each(ctx: Ctx, kind: LegacyKind, legacyId: unknown, key: ResultKey | null, create: (ctx: Ctx) => Promise<{ id: string; reused?: boolean } | null>): Promise<void> {
    const id = String(legacyId);
    if (await mappedId(ctx, kind, id)) {
      if (key) this.result.skipped[key] += 1;
      return;
    }
    try {
      const made = await ctx.trx.transaction(async (sp) => {
        const inner: Ctx = { ...ctx, trx: sp };
        const out = await create(inner);
        if (out) await remember(inner, kind, id, out.id);
        return out;
      });
      if (made && key) this.result[made.reused ? 'skipped' : 'counts'][key] += 1;
    } catch (error) {
      this.fail(kind, id, (error as Error).message);
    }
  }

  private fail(kind: string, legacyId: string, message: string): void {
    if (this.result.errors.length < MAX_ERRORS) this.result.errors.push({ kind, legacy_id: legacyId, message });
  }

  /**
   * Reads `table` in batches and runs `fn` per batch in one unit of work. The next batch is read
   * from the source while the current one is written, so the two databases work side by side;
   * `prepare` (CPU work that needs no database, such as sanitising HTML) runs on the next batch as
   * soon as it has been read, while this process waits for the current batch's writes. With
   * `parallel`, up to that many batches are written at once (phases whose batches are independent:
   * each reads the map for its own rows, and nothing in one batch refers to another's rows).
   */
  private async walk(phase: string, sql: (after: string) => [string, unknown[]], idColumn: string, fn: (ctx: Ctx, rows: RowDataPacket[]) => Promise<void>,
    more: { size?: number; prepare?: (rows: RowDataPacket[]) => void; parallel?: boolean } = {}): Promise<void> {
    const source = batches(this.src, sql, idColumn, more.size ?? this.size);
    const read = () => {
      const item = source.next();
      return more.prepare ? item.then((it) => {
        if (!it.done) more.prepare!(it.value);
        return it;
      }) : item;
    };
    const width = more.parallel ? Math.max(1, this.parallel) : 1;
    const writing = new Set<Promise<void>>();
    const failures: unknown[] = [];
    let next = read();
    try {
      // Stops reading at the first failed batch; the batches in flight then finish (below).
      while (!failures.length) {
        const item = await next;
        if (item.done) break;
        next = read();
        // A run that stops here (an error, the caller giving up) leaves no unhandled read behind.
        next.catch(() => undefined);
        const write: Promise<void> = this.unit((ctx) => fn(ctx, item.value))
          .then(() => this.options.onProgress?.(phase, this.result))
          .catch((error: unknown) => {
            failures.push(error);
          })
          .finally(() => writing.delete(write));
        writing.add(write);
        while (writing.size >= width && !failures.length) await Promise.race(writing);
      }
    } finally {
      await Promise.all(writing);
      await next.catch(() => undefined);
      await source.return(undefined);
    }
    if (failures.length) throw failures[0];
  }

  async run(): Promise<void> {
    await this.teams();
    await this.agents();
    await this.organizations();
    await this.customers();
    await this.ticketTypes();
    await this.tickets();
    // The tickets' `ticket.imported` events onto the live stream, before the long entries phase.
    await this.publish();
    await this.messages();
    await this.attachments();
    await this.collaborators();
  }

  /** A team of this name already in the tenant is reused (counted as skipped). */
  private async team(ctx: Ctx, name: string, created: Date, updated: Date): Promise<{ id: string; reused?: boolean }> {
    const existing = await TeamRecord.scoped(ctx).whereRaw('lower(name) = lower(?)', [name]).first();
    if (existing) return { id: existing.id, reused: true };
    const team = await TeamRecord.insertIn(ctx, { name, description: null, created_at: created, updated_at: updated });
    return { id: team.id };
  }

  private async teams(): Promise<void> {
    await this.walk('teams', (after) => [`SELECT id, name, created, updated FROM ${this.t('department')} WHERE id > ? ORDER BY id`, [after]], 'id', async (ctx, rows) => {
      for (const r of rows) {
        await this.each(ctx, 'department', r.id, 'teams', (c) => this.team(c, String(r.name), this.date(r.created) ?? c.now, this.date(r.updated) ?? this.date(r.created) ?? c.now));
      }
    });
    if (!(await this.hasTable('team'))) return;
    await this.walk('teams', (after) => [`SELECT team_id, name, created, updated FROM ${this.t('team')} WHERE team_id > ? ORDER BY team_id`, [after]], 'team_id', async (ctx, rows) => {
      for (const r of rows) {
        await this.each(ctx, 'team', r.team_id, 'teams', (c) => this.team(c, String(r.name), this.date(r.created) ?? c.now, this.date(r.updated) ?? this.date(r.created) ?? c.now));
      }
    });
  }

  /** The user holding one of these addresses in the tenant, if any. */
  private async userByEmail(ctx: Ctx, email: string): Promise<UserRecord | undefined> {
    const hit = await scoped<{ user_id: string }>(ctx, 'user_emails').where('email', email.toLowerCase()).first('user_id');
    return hit ? UserRecord.findIn(ctx, hit.user_id) : undefined;
  }

  private async agents(): Promise<void> {
    const access = (await this.hasTable('staff_dept_access'))
      ? await this.rows(`SELECT staff_id, dept_id FROM ${this.t('staff_dept_access')}`) : [];
    const members = (await this.hasTable('team_member')) ? await this.rows(`SELECT team_id, staff_id FROM ${this.t('team_member')}`) : [];
    const leads = (await this.hasTable('team')) ? await this.rows(`SELECT team_id, lead_id FROM ${this.t('team')}`) : [];
    await this.walk('agents', (after) => [`SELECT staff_id, dept_id, firstname, lastname, username, email, phone, isadmin, isactive, created, updated FROM ${this.t('staff')} WHERE staff_id > ? ORDER BY staff_id`, [after]], 'staff_id', async (ctx, rows) => {
      const departments = await mappedIds(ctx, 'department');
      const teams = await mappedIds(ctx, 'team');
      for (const r of rows) {
        await this.each(ctx, 'agent', r.staff_id, 'agents', async (c) => {
          const email = String(r.email ?? '').trim().toLowerCase();
          if (!email) throw new Error('the agent has no email address');
          const existing = await this.userByEmail(c, email);
          if (existing) return { id: existing.id, reused: true };
          const name = `${r.firstname ?? ''} ${r.lastname ?? ''}`.trim() || String(r.username);
          const created = this.date(r.created) ?? c.now;
          // No password: agents are invited or reset theirs (CONTRACT §12).
          const user = await UserRecord.insertIn(c, {
            email, name, role: Number(r.isadmin) ? 'admin' : 'agent', active: Boolean(Number(r.isactive)),
            phone: r.phone ? String(r.phone) : null, created_at: created, updated_at: this.date(r.updated) ?? created,
          });
          const teamIds = new Map<string, boolean>();
          const staff = String(r.staff_id);
          for (const dept of [String(r.dept_id), ...access.filter((a) => String(a.staff_id) === staff).map((a) => String(a.dept_id))]) {
            const id = departments.get(dept);
            if (id) teamIds.set(id, teamIds.get(id) ?? false);
          }
          for (const m of members.filter((x) => String(x.staff_id) === staff)) {
            const id = teams.get(String(m.team_id));
            const lead = leads.some((l) => String(l.team_id) === String(m.team_id) && String(l.lead_id) === staff);
            if (id) teamIds.set(id, lead);
          }
          for (const [teamId, isLead] of teamIds) {
            await scoped(c, 'team_members').insert({ tenant_id: c.tenantId, id: uuidv7(c.now.getTime()), team_id: teamId, user_id: user.id, is_lead: isLead, created_at: created })
              .onConflict(['tenant_id', 'team_id', 'user_id']).ignore();
          }
          return { id: user.id };
        });
      }
    });
  }

  private async organizations(): Promise<void> {
    if (!(await this.hasTable('organization'))) return;
    await this.walk('organizations', (after) => [`SELECT id, name, domain, created, updated FROM ${this.t('organization')} WHERE id > ? ORDER BY id`, [after]], 'id', async (ctx, rows) => {
      for (const r of rows) {
        await this.each(ctx, 'organization', r.id, 'organizations', async (c) => {
          const name = String(r.name).trim();
          const existing = await OrganizationRecord.scoped(c).whereRaw('lower(name) = lower(?)', [name]).first();
          if (existing) return { id: existing.id, reused: true };
          const wanted = String(r.domain ?? '').toLowerCase().split(/[\s,]+/).filter((d) => /^[a-z0-9.-]+\.[a-z]{2,}$/.test(d));
          // A domain already linked to another organization of the tenant stays there.
          const taken = wanted.length ? await scoped<{ domain: string }>(c, 'organization_domains').whereIn('domain', wanted).pluck('domain') : [];
          const created = this.date(r.created) ?? c.now;
          const org = await OrganizationRecord.insertIn(c, {
            name, domains: [...new Set(wanted.filter((d) => !taken.includes(d)))], created_at: created, updated_at: this.date(r.updated) ?? created,
          });
          return { id: org.id };
        });
      }
    });
  }

  private async customers(): Promise<void> {
    await this.walk('customers', (after) => [`SELECT id, org_id, default_email_id, name, created, updated FROM ${this.t('user')} WHERE id > ? ORDER BY id`, [after]], 'id', async (ctx, rows) => {
      const emails = await this.rows(`SELECT id, user_id, address FROM ${this.t('user_email')} WHERE user_id IN (?) ORDER BY id`, [rows.map((r) => r.id)]);
      const orgs = await mappedIds(ctx, 'organization');
      for (const r of rows) {
        await this.each(ctx, 'customer', r.id, 'customers', async (c) => {
          const mine = emails.filter((e) => String(e.user_id) === String(r.id)).map((e) => ({ id: String(e.id), address: String(e.address).trim().toLowerCase() })).filter((e) => e.address);
          const primary = mine.find((e) => e.id === String(r.default_email_id)) ?? mine[0];
          if (!primary) throw new Error('the user has no email address');
          const existing = await this.userByEmail(c, primary.address);
          if (existing) return { id: existing.id, reused: true };
          const alternates: string[] = [];
          for (const e of mine) {
            if (e === primary || alternates.some((a) => a.toLowerCase() === e.address.toLowerCase())) continue;
            if (!(await this.userByEmail(c, e.address))) alternates.push(e.address);
          }
          const created = this.date(r.created) ?? c.now;
          const user = await UserRecord.insertIn(c, {
            email: primary.address, name: String(r.name ?? '').trim() || primary.address, role: 'customer', alternate_emails: alternates,
            organization_id: orgs.get(String(r.org_id)) ?? null, created_at: created, updated_at: this.date(r.updated) ?? created,
          });
          return { id: user.id };
        });
      }
    });
  }

  private async ticketTypes(): Promise<void> {
    if (!(await this.hasTable('help_topic'))) return;
    await this.walk('ticket_types', (after) => [`SELECT topic_id, topic, created, updated FROM ${this.t('help_topic')} WHERE topic_id > ? ORDER BY topic_id`, [after]], 'topic_id', async (ctx, rows) => {
      for (const r of rows) {
        await this.each(ctx, 'ticket_type', r.topic_id, 'ticket_types', async (c) => {
          const name = String(r.topic).trim();
          const existing = await TicketType.scoped(c).whereRaw('lower(name) = lower(?)', [name]).first();
          if (existing) return { id: existing.id, reused: true };
          const created = this.date(r.created) ?? c.now;
          const type = await TicketType.insertIn(c, { name, created_at: created, updated_at: this.date(r.updated) ?? created });
          return { id: type.id };
        });
      }
    });
  }

  /** Ticket-form fields beyond subject, priority and the message become text custom fields. */
  private async customFields(): Promise<Map<string, string>> {
    const fields = await this.rows(
      `SELECT ff.id, ff.name, ff.label FROM ${this.t('form_field')} ff JOIN ${this.t('form')} f ON f.id = ff.form_id
        WHERE f.type = 'T' AND ff.type NOT IN ('thread', 'priority', 'info', 'break') AND ff.name NOT IN ('subject', 'priority', 'message') ORDER BY ff.id`);
    const keys = new Map<string, string>();
    for (const f of fields) {
      const key = `osticket_${String(f.name || f.id).toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 50) || f.id}`;
      await this.unit(async (ctx) => {
        const existing = await CustomField.scoped(ctx).findOne({ 'custom_fields.key': key });
        if (!existing) await CustomField.insertIn(ctx, { key, label: String(f.label || f.name || key).slice(0, 200), kind: 'text', created_at: ctx.now, updated_at: ctx.now });
      });
      keys.set(String(f.id), key);
    }
    return keys;
  }

  private async tickets(): Promise<void> {
    const statuses = new Map((await this.rows(`SELECT id, name, state FROM ${this.t('ticket_status')}`)).map((s) => [String(s.id), s]));
    const priorities = new Map((await this.rows(`SELECT priority_id, priority FROM ${this.t('ticket_priority')}`)).map((p) => [String(p.priority_id), String(p.priority).toLowerCase()]));
    const hasForms = (await this.hasTable('form_entry')) && (await this.hasTable('form_entry_values')) && (await this.hasTable('form_field'));
    const hasCdata = await this.hasTable('ticket__cdata');
    const customKeys = hasForms ? await this.customFields() : new Map<string, string>();
    // Kept numbers stay below the tenant's sequence, so numbers it draws later never collide.
    const [max] = await this.rows(`SELECT MAX(CAST(number AS UNSIGNED)) AS n FROM ${this.t('ticket')} WHERE number REGEXP '^[0-9]{1,9}$'`);
    const top = Number(max?.n ?? 0);
    const vocab = await this.unit(async (ctx) => {
      if (top > 0) {
        await reserveTicketNumbersThrough(ctx, top);
      }
      const st = await Status.scoped(ctx).whereIn('key', ['open', 'resolved', 'closed']);
      const pr = await Priority.scoped(ctx);
      return { status: new Map(st.map((s) => [s.key, s])), priority: new Map(pr.map((p) => [p.key, p.id])) };
    });
    // Agents, teams and types are few and their phases have committed: their maps are read once.
    const { agents, departments, teams, types } = await this.unit(async (ctx) => ({
      agents: await mappedIds(ctx, 'agent'), departments: await mappedIds(ctx, 'department'),
      teams: await mappedIds(ctx, 'team'), types: await mappedIds(ctx, 'ticket_type'),
    }));

    await this.walk('tickets', (after) => [`SELECT * FROM ${this.t('ticket')} WHERE ticket_id > ? ORDER BY ticket_id`, [after]], 'ticket_id', async (ctx, rows) => {
      const ids = rows.map((r) => r.ticket_id);
      const cdata = hasCdata ? new Map((await this.rows(`SELECT * FROM ${this.t('ticket__cdata')} WHERE ticket_id IN (?)`, [ids])).map((c) => [String(c.ticket_id), c])) : new Map();
      const answers = hasForms ? await this.rows(
        `SELECT fe.object_id AS ticket_id, ff.id AS field_id, ff.name, v.value, v.value_id FROM ${this.t('form_entry')} fe
           JOIN ${this.t('form_entry_values')} v ON v.entry_id = fe.id JOIN ${this.t('form_field')} ff ON ff.id = v.field_id
          WHERE fe.object_type = 'T' AND fe.object_id IN (?) ORDER BY fe.id`, [ids]) : [];
      const answersOf = new Map<string, RowDataPacket[]>();
      for (const a of answers) {
        const key = String(a.ticket_id);
        const list = answersOf.get(key);
        if (list) list.push(a);
        else answersOf.set(key, [a]);
      }
      const customers = await mappedIds(ctx, 'customer', rows.map((r) => r.user_id));
      const requesters = await UserRecord.scoped(ctx).whereIn('users.id', [...new Set(customers.values())]).select('id', 'organization_id');
      const orgOf = new Map(requesters.map((u) => [u.id, u.organization_id]));
      const numbers = rows.map((r) => String(r.number ?? '')).filter((n) => /^[0-9]{1,9}$/.test(n)).map(Number);
      const taken = new Set((await Ticket.scoped(ctx).whereIn('ticket_number', numbers).select('ticket_number')).map((x) => x.ticket_number));
      /** The row of a ticket; its number is null when the legacy one cannot be kept (drawn later). */
      const build = (r: RowDataPacket) => {
        const mine = answersOf.get(String(r.ticket_id)) ?? [];
        const cd = cdata.get(String(r.ticket_id)) as RowDataPacket | undefined;
        const formSubject = mine.find((a) => a.name === 'subject')?.value;
        const subject = String(formSubject ?? cd?.subject ?? '').trim() || '(no subject)';
        const formPriority = mine.find((a) => a.name === 'priority')?.value_id;
        const legacyPriority = priorities.get(String(formPriority ?? cd?.priority ?? ''));
        const priorityId = vocab.priority.get(PRIORITY_KEYS[legacyPriority ?? ''] ?? 'normal') ?? vocab.priority.get('normal');
        const legacyStatus = statuses.get(String(r.status_id));
        const statusKey = legacyStatus?.state === 'open' ? 'open' : String(legacyStatus?.name ?? '').toLowerCase() === 'resolved' ? 'resolved' : 'closed';
        const status = vocab.status.get(statusKey);
        if (!status || !priorityId) throw new Error('the tenant lacks the open/resolved/closed statuses or its priorities');
        const requesterId = customers.get(String(r.user_id));
        if (!requesterId) throw new Error(`its user ${r.user_id} was not imported`);
        const source = String(r.source ?? '').toLowerCase();
        const channel: Channel = source === 'web' ? 'webform' : source === 'email' ? 'email' : 'api';
        const tags = source === 'phone' ? ['osticket-source-phone'] : ['web', 'email', 'api'].includes(source) ? [] : ['osticket-source-other'];
        const custom: Record<string, string> = {};
        for (const a of mine) {
          const key = customKeys.get(String(a.field_id));
          if (key && a.value !== null && String(a.value) !== '') custom[key] = String(a.value).slice(0, 10_000);
        }
        const number = String(r.number ?? '');
        let ticketNumber: number | null = /^[0-9]{1,9}$/.test(number) ? Number(number) : null;
        if (ticketNumber !== null && (ticketNumber < 1 || taken.has(ticketNumber))) ticketNumber = null;
        if (ticketNumber !== null) taken.add(ticketNumber);
        const created = this.date(r.created) ?? ctx.now;
        const closed = statusKey === 'open' ? null : this.date(r.closed) ?? this.date(r.updated) ?? created;
        return {
          id: uuidv7(ctx.now.getTime()), ticket_number: ticketNumber, subject, status_id: status.id, priority_id: priorityId,
          type_id: types.get(String(r.topic_id)) ?? null, requester_id: requesterId,
          assigned_agent_id: agents.get(String(r.staff_id)) ?? null,
          team_id: teams.get(String(r.team_id)) ?? departments.get(String(r.dept_id)) ?? null,
          organization_id: orgOf.get(requesterId) ?? null, channel, tags, custom_fields: custom,
          resolved_at: statusKey === 'resolved' ? closed : null, closed_at: closed,
          created_at: created, updated_at: this.date(r.updated) ?? created,
        };
      };
      const importedEvent = (r: RowDataPacket, row: { id: string; ticket_number: number | null }): NewEvent => ({
        type: 'ticket.imported', subjectType: 'ticket', ticketId: row.id, to: `osTicket #${String(r.number ?? '')}`,
        data: { ticket_id: row.id, ticket_number: row.ticket_number, legacy: { system: 'osticket', ticket_id: Number(r.ticket_id), number: String(r.number ?? '') } },
      });
      const imported = (c: Ctx, r: RowDataPacket, row: { id: string; ticket_number: number | null }) => recordEvent(c, importedEvent(r, row));
      // Fast path as for thread entries: the batch's new tickets with kept numbers in one INSERT with
      // their map rows and events; the rest (numbers to draw, failures) row by row.
      const done = await mappedIds(ctx, 'ticket', ids);
      const slow: RowDataPacket[] = [];
      const built: Array<{ r: RowDataPacket; row: ReturnType<typeof build> }> = [];
      for (const r of rows) {
        if (done.has(String(r.ticket_id))) {
          this.result.skipped.tickets += 1;
          continue;
        }
        try {
          const row = build(r);
          if (row.ticket_number === null) slow.push(r);
          else built.push({ r, row });
        } catch {
          slow.push(r);
        }
      }
      if (built.length) {
        try {
          await ctx.trx.transaction(async (sp) => {
            const inner: Ctx = { ...ctx, trx: sp };
            await insertRows(inner, 'tickets', built.map((b) => b.row));
            await insertRows(inner, 'legacy_import_map', built.map((b) => ({
              system: SYSTEM, kind: 'ticket', legacy_id: String(b.r.ticket_id), target_id: b.row.id, created_at: ctx.now,
            })));
            await recordEvents(inner, built.map((b) => importedEvent(b.r, b.row)));
          });
          this.result.counts.tickets += built.length;
        } catch {
          for (const b of built) taken.delete(b.row.ticket_number!);
          slow.push(...built.map((b) => b.r));
        }
      }
      for (const r of slow.sort((a, b) => Number(a.ticket_id) - Number(b.ticket_id))) {
        await this.each(ctx, 'ticket', r.ticket_id, 'tickets', async (c) => {
          const row = build(r);
          // A number already in the tenant (or not numeric) gives way to the tenant's sequence.
          if (row.ticket_number === null || await Ticket.scoped(c).findOne({ 'tickets.ticket_number': row.ticket_number })) {
            row.ticket_number = await nextTicketNumber(c);
          }
          await Ticket.insertIn(c, row);
          await imported(c, r, row);
          return { id: row.id };
        });
      }
    }, { parallel: true });
  }

  // STRAIGHT_JOIN (here and for attachments and collaborators): the keyset walk must read the
  // entries in primary-key order. Left to itself MariaDB starts from the joined table's index and
  // sorts the whole remainder for every batch, which makes a large import quadratic.
  private async messages(): Promise<void> {
    // Agents are few: their map is read once (the earlier phase has committed them all).
    const agents = await this.unit((ctx) => mappedIds(ctx, 'agent'));
    // An entry's body as stored: HTML sanitised and its text, or the plain text as it came. Worked
    // out for the next batch while the current one is written (`prepare` of walk).
    const bodies = new WeakMap<RowDataPacket, { body: string; body_html: string | null }>();
    const bodyOf = (r: RowDataPacket) => {
      let out = bodies.get(r);
      if (!out) {
        const raw = String(r.body ?? '');
        const html = String(r.format) === 'html' ? sanitizeBodyHtml(raw) : null;
        out = { body: html !== null ? htmlToText(html) : raw, body_html: html };
        bodies.set(r, out);
      }
      return out;
    };
    const prepare = (rows: RowDataPacket[]) => {
      for (const r of rows) {
        try {
          bodyOf(r);
        } catch {
          // worked out (and reported) again when the row is built
        }
      }
    };
    await this.walk('messages', (after) => [
      `SELECT STRAIGHT_JOIN e.id, e.staff_id, e.user_id, e.type, e.poster, e.format, e.body, e.created, t.object_id AS ticket_id
         FROM ${this.t('thread_entry')} e JOIN ${this.t('thread')} t ON t.id = e.thread_id
        WHERE t.object_type = 'T' AND e.id > ? ORDER BY e.id`, [after]], 'id', async (ctx, rows) => {
      // thread ids are not ticket ids: the ticket is the thread's object_id (object_type 'T').
      // The batch's tickets with the map in one query: legacy id → id, channel, creation time.
      const ticketRows: Array<{ legacy_id: string; id: string; channel: Channel; created_at: Date }> = await scoped(ctx, 'legacy_import_map as m')
        .join('tickets as t', (j) => j.on('t.tenant_id', 'm.tenant_id').andOn('t.id', 'm.target_id'))
        .where({ 'm.system': SYSTEM, 'm.kind': 'ticket' }).whereRaw('m.legacy_id = ANY(?::text[])', [[...new Set(rows.map((r) => String(r.ticket_id)))]])
        .select('m.legacy_id', 't.id', 't.channel', 't.created_at');
      const tickets = new Map(ticketRows.map((x) => [x.legacy_id, x.id]));
      const ticketOf = new Map(ticketRows.map((x) => [x.id, x]));
      const customers = await mappedIds(ctx, 'customer', [...new Set(rows.map((r) => String(r.user_id)))]);
      const done = await mappedIds(ctx, 'message', rows.map((r) => r.id));
      const keyOf = (r: RowDataPacket): ResultKey => (String(r.type) === 'N' ? 'notes' : 'messages');
      const build = (r: RowDataPacket): EntryRow => {
        const type = String(r.type);
        if (!['M', 'R', 'N'].includes(type)) throw new Error(`thread entries of type ${type} are not imported`);
        const ticketId = tickets.get(String(r.ticket_id));
        const ticket = ticketId ? ticketOf.get(ticketId) : undefined;
        if (!ticket) throw new Error(`its ticket ${r.ticket_id} was not imported`);
        const fromCustomer = type === 'M' && Number(r.staff_id) === 0;
        const authorId = fromCustomer ? customers.get(String(r.user_id)) ?? null : agents.get(String(r.staff_id)) ?? customers.get(String(r.user_id)) ?? null;
        const { body, body_html } = bodyOf(r);
        return {
          id: uuidv7(ctx.now.getTime()), ticket_id: ticket.id, body, body_html, is_private: type === 'N',
          author_id: authorId, author_name: String(r.poster ?? '').trim() || (fromCustomer ? 'Customer' : 'Agent'),
          is_agent: !fromCustomer, channel: ticket.channel, created_at: this.date(r.created) ?? ticket.created_at,
        };
      };
      // Fast path: every new entry of the batch in one INSERT with its map rows, in one savepoint.
      // Whatever cannot be built, or a batch whose INSERT fails, goes row by row (and reports).
      const slow: RowDataPacket[] = [];
      const built: Array<{ r: RowDataPacket; row: EntryRow }> = [];
      for (const r of rows) {
        if (done.has(String(r.id))) {
          this.result.skipped[keyOf(r)] += 1;
          continue;
        }
        try {
          built.push({ r, row: build(r) });
        } catch {
          slow.push(r);
        }
      }
      if (built.length) {
        try {
          await ctx.trx.transaction((sp) => insertEntries(sp, ctx, built));
          for (const b of built) this.result.counts[keyOf(b.r)] += 1;
        } catch {
          slow.push(...built.map((b) => b.r));
        }
      }
      for (const r of slow.sort((a, b) => Number(a.id) - Number(b.id))) {
        await this.each(ctx, 'message', r.id, keyOf(r), async (c) => {
          const row = build(r);
          await Message.insertIn(c, row);
          return { id: String(row.id) };
        });
      }
    }, { size: this.entrySize, prepare, parallel: true });
  }

  private async fileBytes(file: RowDataPacket): Promise<Buffer> {
    const backend = String(file.bk);
    if (backend === 'D') {
      const chunks = await this.rows(`SELECT filedata FROM ${this.t('file_chunk')} WHERE file_id = ? ORDER BY chunk_id`, [file.file_id]);
      return Buffer.concat(chunks.map((ch) => Buffer.from(ch.filedata as Buffer)));
    }
    if (backend === 'F' && this.options.attachmentsDir) {
      const key = String(file.key);
      // osTicket's storage-fs keeps files under <upload dir>/<first letter of key>/<key>.
      for (const path of [join(this.options.attachmentsDir, key.slice(0, 1), key), join(this.options.attachmentsDir, key)]) {
        try {
          return await readFile(path);
        } catch {
          // try the next layout
        }
      }
      throw new Error(`file ${key} not found under the attachments directory`);
    }
    throw new Error(backend === 'F' ? 'the file is stored on the filesystem: pass the attachments directory' : `storage backend ${backend} is not supported`);
  }

  private async attachments(): Promise<void> {
    if (!(await this.hasTable('attachment')) || !(await this.hasTable('file'))) return;
    const store = this.options.dryRun ? null : 'store';
    await this.walk('attachments', (after) => [
      `SELECT STRAIGHT_JOIN a.id, a.object_id AS entry_id, a.name, f.id AS file_id, f.bk, f.type, f.name AS file_name, f.\`key\`
         FROM ${this.t('attachment')} a JOIN ${this.t('file')} f ON f.id = a.file_id
        WHERE a.type = 'H' AND a.id > ? ORDER BY a.id`, [after]], 'id', async (ctx, rows) => {
      const messages = await mappedIds(ctx, 'message', rows.map((r) => r.entry_id));
      for (const r of rows) {
        await this.each(ctx, 'attachment', r.id, 'attachments', async (c) => {
          const messageId = messages.get(String(r.entry_id));
          if (!messageId) throw new Error(`its thread entry ${r.entry_id} was not imported`);
          const message = (await Message.findIn(c, messageId))!;
          const bytes = await this.fileBytes(r);
          const id = uuidv7(c.now.getTime());
          const storageKey = `${c.tenantId}/${id}`;
          if (store) await blobStoreFor(c.deps.config).put(storageKey, Readable.from([bytes]));
          const row = await Attachment.insertIn(c, {
            id, ticket_id: message.ticket_id, message_id: message.id, uploaded_by: message.author_id,
            filename: String(r.name ?? r.file_name ?? 'file').split(/[\\/]/).pop()!.slice(0, 255) || 'file',
            content_type: String(r.type || 'application/octet-stream'), size: bytes.length, storage_key: storageKey,
            sha256: createHash('sha256').update(bytes).digest('hex'), created_at: message.created_at,
          });
          return { id: row.id };
        });
      }
    });
  }

  private async collaborators(): Promise<void> {
    if (!(await this.hasTable('thread_collaborator'))) return;
    await this.walk('collaborators', (after) => [
      `SELECT STRAIGHT_JOIN c.id, c.user_id, c.created, t.object_id AS ticket_id FROM ${this.t('thread_collaborator')} c
         JOIN ${this.t('thread')} t ON t.id = c.thread_id WHERE t.object_type = 'T' AND c.id > ? ORDER BY c.id`, [after]], 'id', async (ctx, rows) => {
      const tickets = await mappedIds(ctx, 'ticket', rows.map((r) => r.ticket_id));
      const customers = await mappedIds(ctx, 'customer', rows.map((r) => r.user_id));
      for (const r of rows) {
        await this.each(ctx, 'collaborator', r.id, null, async (c) => {
          const ticketId = tickets.get(String(r.ticket_id));
          const userId = customers.get(String(r.user_id));
          if (!ticketId || !userId) throw new Error('its ticket or user was not imported');
          const existing = await TicketCollaborator.scoped(c).findOne({ 'ticket_collaborators.ticket_id': ticketId, 'ticket_collaborators.user_id': userId });
          if (existing) return { id: existing.id };
          const row = await TicketCollaborator.insertIn(c, { ticket_id: ticketId, user_id: userId, added_by: null, created_at: this.date(r.created) ?? c.now });
          return { id: row.id };
        });
      }
    });
  }
}

