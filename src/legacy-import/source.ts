import type mysql from 'mysql2/promise';
import { errors, type AppError } from '../core/errors.js';

/**
 * The connection to an osTicket database (CONTRACT §12): `mysql://user:pass@host:port/db?prefix=ost_`.
 * Rows are read with dates as strings (`dateStrings`), so no driver or server time zone shifts them;
 * `wallTimeToDate` reads them in the source's time zone. utf8mb4 on the connection reads osTicket's
 * 3-byte utf8 tables unchanged.
 */
export interface LegacySource {
  conn: mysql.Connection;
  prefix: string;
  timezone: string;
  /** `table('ticket')` → the quoted, prefixed name. */
  table(name: string): string;
  close(): Promise<void>;
}

/** Every refusal of a source is a 422 on the field `source` (CONTRACT §12: the reason in the message). */
export function unprocessable(message: string): AppError {
  return errors.invalid('source', message);
}

interface ParsedDsn { host: string; port: number; user: string; password: string; database: string; prefix: string }

export function parseDsn(dsn: string): ParsedDsn {
  let url: URL;
  try {
    url = new URL(dsn);
  } catch {
    throw unprocessable('The source is not a valid mysql:// URL');
  }
  if (url.protocol !== 'mysql:' && url.protocol !== 'mariadb:') throw unprocessable('The source must be a mysql:// URL');
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!database) throw unprocessable('The source URL names no database');
  const prefix = url.searchParams.get('prefix') ?? 'ost_';
  if (!/^[A-Za-z0-9_]{0,32}$/.test(prefix)) throw unprocessable('The table prefix may hold only letters, digits and _');
  return {
    host: url.hostname || '127.0.0.1',
    port: url.port ? Number(url.port) : 3306,
    user: decodeURIComponent(url.username) || 'root',
    password: decodeURIComponent(url.password),
    database,
    prefix,
  };
}

/** The DSN without its password, for logs and the status of a run. */
export function redactDsn(dsn: string): string {
  try {
    const url = new URL(dsn);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(invalid source)';
  }
}

export async function openSource(dsn: string, timezone = 'UTC'): Promise<LegacySource> {
  const parsed = parseDsn(dsn);
  if (!isTimeZone(timezone)) throw unprocessable(`Unknown time zone ${timezone}`);
  let conn: mysql.Connection;
  try {
    // Loaded on first use: only an import needs the MySQL client (docs/performance.md).
    const { createConnection } = await import('mysql2/promise');
    conn = await createConnection({
      host: parsed.host, port: parsed.port, user: parsed.user, password: parsed.password, database: parsed.database,
      charset: 'UTF8MB4_GENERAL_CI', dateStrings: true, supportBigNumbers: true, bigNumberStrings: true, connectTimeout: 10_000,
    });
  } catch (error) {
    throw unprocessable(`The source is unreachable: ${(error as Error).message}`);
  }
  const prefix = parsed.prefix;
  return {
    conn,
    prefix,
    timezone,
    table: (name) => `\`${prefix}${name}\``,
    close: () => conn.end().catch(() => undefined),
  };
}

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function offsetMs(tz: string, at: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(new Date(at));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - Math.floor(at / 1000) * 1000;
}

/** A DATETIME string read in `tz`; osTicket's zero dates (and NULL) are null. */
export function wallTimeToDate(value: string | null | undefined, tz: string): Date | null {
  if (!value || value.startsWith('0000-00-00')) return null;
  const [day, time = '00:00:00'] = value.split(' ');
  const asUtc = Date.parse(`${day}T${time}Z`);
  if (Number.isNaN(asUtc)) return null;
  if (tz === 'UTC') return new Date(asUtc);
  // Two passes settle the offset around a daylight-saving change.
  const first = asUtc - offsetMs(tz, asUtc);
  return new Date(asUtc - offsetMs(tz, first));
}

/** Answers whether the database is an osTicket schema; throws a 422 naming what is missing. */
export async function probe(source: LegacySource): Promise<{ version: string; counts: Record<string, number> }> {
  const [tables] = await source.conn.query<mysql.RowDataPacket[]>(
    'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()');
  const present = new Set(tables.map((r) => String(r.name)));
  const needed = ['config', 'ticket', 'thread', 'thread_entry', 'staff', 'department', 'user', 'user_email', 'ticket_status', 'ticket_priority'];
  const missing = needed.filter((n) => !present.has(`${source.prefix}${n}`));
  if (missing.length) {
    throw unprocessable(`Not an osTicket schema (prefix ${source.prefix}): missing table(s) ${missing.map((m) => source.prefix + m).join(', ')}`);
  }
  const [sig] = await source.conn.query<mysql.RowDataPacket[]>(
    `SELECT value FROM ${source.table('config')} WHERE namespace = 'core' AND \`key\` = 'schema_signature'`);
  const signature = sig[0]?.value ? String(sig[0].value) : null;
  if (!signature) throw unprocessable('Not an osTicket schema: no schema signature in its config');
  const version = KNOWN_SIGNATURES[signature] ?? `unknown (schema ${signature})`;
  const counts: Record<string, number> = {};
  const countOf: Record<string, string> = {
    teams: 'department', agents: 'staff', organizations: 'organization', customers: 'user', ticket_types: 'help_topic',
    tickets: 'ticket', thread_entries: 'thread_entry', attachments: 'attachment',
  };
  for (const [key, table] of Object.entries(countOf)) {
    if (!present.has(`${source.prefix}${table}`)) continue;
    const [rows] = await source.conn.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${source.table(table)}`);
    counts[key] = Number(rows[0]?.n ?? 0);
  }
  return { version, counts };
}

/** Schema signatures of osTicket releases (include/upgrader/streams/core.sig). */
const KNOWN_SIGNATURES: Record<string, string> = {
  '5fb92bef17f3b603659e024c01cc7a59': '1.18',
};

/** Reads a table in id order, `size` rows at a time (keyset on `idColumn`), never all at once. */
export async function* batches(source: LegacySource, sql: (after: string) => [string, unknown[]], idColumn: string, size = 500): AsyncGenerator<mysql.RowDataPacket[]> {
  let after = '0';
  for (;;) {
    const [query, params] = sql(after);
    const [rows] = await source.conn.query<mysql.RowDataPacket[]>(`${query} LIMIT ${size}`, params);
    if (!rows.length) return;
    yield rows;
    after = String(rows[rows.length - 1]![idColumn]);
    if (rows.length < size) return;
  }
}
