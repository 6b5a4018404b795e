import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { resolve, join } from 'node:path';
import { ensureDataDir, inDataDir } from './data-dir.js';
import { LOG_FORMATS, type LogFormat } from './logging.js';

/**
 * All configuration comes from environment variables (CONTRACT §10), read once here into a typed
 * object. Nothing else in the code reads process.env, so tests build a Config explicitly.
 */
export interface Config {
  databaseUrl: string | null;
  dataDir: string;
  port: number;
  host: string;
  siteUrl: string;
  secretKey: string;
  baseDomain: string | null;
  defaultTenant: string | null;
  redisUrl: string | null;
  smtpUrl: string | null;
  mailFrom: string;
  licensePublicKey: string | null;
  webhooksAllowPrivate: boolean;
  rateLimitPerMin: number;
  bodyLimitBytes: number;
  /** HELPDESK_ATTACHMENT_MAX_BYTES: the largest file one upload part may carry (default 25 MB). */
  attachmentMaxBytes: number;
  trustProxy: boolean;
  metricsToken: string | null;
  adminEmail: string;
  logLevel: string;
  /** HELPDESK_LOG_FORMAT; null: pretty on a terminal, JSON otherwise (see logging.ts). */
  logFormat: LogFormat | null;
  /** NO_COLOR (https://no-color.org): no colours in pretty log lines. */
  noColor: boolean;
  /** HELPDESK_STREAM_HEARTBEAT_SECONDS: a comment line this often keeps live streams open through proxies. */
  streamHeartbeatMs: number;
  /**
   * HELPDESK_STREAM_MAX_SECONDS: a live stream is ended after this long and the client reconnects
   * with Last-Event-ID (spreads clients over daemons, bounds how long a stream outlives its token).
   */
  streamMaxMs: number;
  /**
   * HELPDESK_VAPID_PUBLIC_KEY / _PRIVATE_KEY: the instance's web push (VAPID) key pair, base64url of
   * the raw 65-byte public and 32-byte private key. Unset: generated once into the data dir
   * (src/push/vapid.ts); several daemons must share explicit keys.
   */
  vapidPublicKey: string | null;
  vapidPrivateKey: string | null;
  /**
   * HELPDESK_CREDENTIAL_CACHE_SECONDS: how long a daemon may answer a resolved bearer token from
   * memory (default 5; 0 turns the cache off). A backstop only: changes are seen at once through
   * NOTIFY (src/core/credential-cache.ts); this bounds how stale an entry can be if one were missed.
   */
  credentialCacheMs: number;
  /** HELPDESK_EXTENSION_TIMEOUT_MS: how long one plugin call may run before it is stopped (default 2000). */
  extensionTimeoutMs: number;
  /** HELPDESK_EXTENSION_HOOK_PER_MIN: inbound hook calls one extension accepts per minute (default 120). */
  extensionHookPerMin: number;
  /**
   * HELPDESK_ARCHIVE_URL: where the ticket archiver writes Parquet files: `file:///path` or
   * `s3://bucket/prefix`; null: `file://<data dir>/archive`.
   */
  archiveUrl: string | null;
  /** HELPDESK_ARCHIVE_S3_ENDPOINT: an S3-compatible endpoint (path-style addressing); null: AWS. */
  archiveS3Endpoint: string | null;
  /** HELPDESK_ARCHIVE_S3_REGION (default us-east-1). */
  archiveS3Region: string;
  /** HELPDESK_ARCHIVE_S3_ACCESS_KEY_ID / _SECRET_ACCESS_KEY (else AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY). */
  archiveS3AccessKeyId: string | null;
  archiveS3SecretAccessKey: string | null;
  /** HELPDESK_ARCHIVE_BATCH_SIZE: tickets per archive batch (one set of Parquet files), default 200. */
  archiveBatchSize: number;
  /**
   * HELPDESK_HEAP_GROWING_PERCENT: how far a daemon's JavaScript heap may grow past its live data
   * before the next full collection (default 50: one and a half times the live heap; 0 leaves V8's own sizing,
   * up to four times). See daemon/heap-growth.ts.
   */
  heapGrowingPercent: number;
}

type Env = Record<string, string | undefined>;

function intFrom(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer of at least ${min}, got "${raw}"`);
  return value;
}

function flag(env: Env, name: string): boolean {
  return ['1', 'true', 'yes', 'on'].includes((env[name] ?? '').toLowerCase());
}

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value.trim() === '' ? null : value.trim();
}

/**
 * HELPDESK_SECRET_KEY encrypts secrets at rest. When absent it is generated once into the data dir,
 * so a single-machine install needs no setup; several daemons must share an explicit key.
 */
export function secretKeyFor(env: Env, dataDir: string): string {
  const explicit = nonEmpty(env.HELPDESK_SECRET_KEY);
  if (explicit) return explicit;
  const file = join(dataDir, 'secret.key');
  if (existsSync(file)) return inDataDir(dataDir, `read ${file}`, () => readFileSync(file, 'utf8').trim());
  ensureDataDir(dataDir);
  const key = randomBytes(32).toString('hex');
  inDataDir(dataDir, `write ${file}`, () => writeFileSync(file, key + '\n', { mode: 0o600, flag: 'wx' }));
  return key;
}

function logFormatFrom(env: Env): LogFormat | null {
  const raw = nonEmpty(env.HELPDESK_LOG_FORMAT)?.toLowerCase();
  if (raw === undefined) return null;
  if (!(LOG_FORMATS as readonly string[]).includes(raw)) throw new Error(`HELPDESK_LOG_FORMAT must be ${LOG_FORMATS.join(' or ')}, got "${raw}"`);
  return raw as LogFormat;
}

export function loadConfig(env: Env = process.env): Config {
  const dataDir = resolve(nonEmpty(env.HELPDESK_DATA_DIR) ?? './.helpdesk');
  const port = intFrom(env, 'PORT', 8080);
  const host = nonEmpty(env.HOST) ?? '127.0.0.1';
  return {
    databaseUrl: nonEmpty(env.DATABASE_URL),
    dataDir,
    port,
    host,
    siteUrl: (nonEmpty(env.HELPDESK_SITE_URL) ?? `http://${host}:${port}`).replace(/\/+$/, ''),
    secretKey: secretKeyFor(env, dataDir),
    baseDomain: nonEmpty(env.HELPDESK_BASE_DOMAIN)?.toLowerCase() ?? null,
    defaultTenant: nonEmpty(env.HELPDESK_DEFAULT_TENANT),
    redisUrl: nonEmpty(env.REDIS_URL),
    smtpUrl: nonEmpty(env.SMTP_URL),
    mailFrom: nonEmpty(env.HELPDESK_MAIL_FROM) ?? 'Helpdesk <no-reply@helpdesk.invalid>',
    licensePublicKey: nonEmpty(env.HELPDESK_LICENSE_PUBLIC_KEY),
    webhooksAllowPrivate: flag(env, 'HELPDESK_WEBHOOKS_ALLOW_PRIVATE'),
    rateLimitPerMin: intFrom(env, 'HELPDESK_RATE_LIMIT_PER_MIN', 600, 1),
    bodyLimitBytes: intFrom(env, 'HELPDESK_BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    attachmentMaxBytes: intFrom(env, 'HELPDESK_ATTACHMENT_MAX_BYTES', 25 * 1024 * 1024, 1),
    trustProxy: flag(env, 'HELPDESK_TRUST_PROXY'),
    metricsToken: nonEmpty(env.HELPDESK_METRICS_TOKEN),
    adminEmail: nonEmpty(env.HELPDESK_ADMIN_EMAIL) ?? 'admin@example.com',
    logLevel: nonEmpty(env.LOG_LEVEL) ?? 'info',
    logFormat: logFormatFrom(env),
    noColor: nonEmpty(env.NO_COLOR) !== null,
    streamHeartbeatMs: intFrom(env, 'HELPDESK_STREAM_HEARTBEAT_SECONDS', 15, 1) * 1000,
    streamMaxMs: intFrom(env, 'HELPDESK_STREAM_MAX_SECONDS', 600, 1) * 1000,
    vapidPublicKey: nonEmpty(env.HELPDESK_VAPID_PUBLIC_KEY),
    vapidPrivateKey: nonEmpty(env.HELPDESK_VAPID_PRIVATE_KEY),
    credentialCacheMs: intFrom(env, 'HELPDESK_CREDENTIAL_CACHE_SECONDS', 5, 0) * 1000,
    extensionTimeoutMs: intFrom(env, 'HELPDESK_EXTENSION_TIMEOUT_MS', 2000, 50),
    extensionHookPerMin: intFrom(env, 'HELPDESK_EXTENSION_HOOK_PER_MIN', 120, 1),
    archiveUrl: nonEmpty(env.HELPDESK_ARCHIVE_URL),
    archiveS3Endpoint: nonEmpty(env.HELPDESK_ARCHIVE_S3_ENDPOINT),
    archiveS3Region: nonEmpty(env.HELPDESK_ARCHIVE_S3_REGION) ?? 'us-east-1',
    archiveS3AccessKeyId: nonEmpty(env.HELPDESK_ARCHIVE_S3_ACCESS_KEY_ID) ?? nonEmpty(env.AWS_ACCESS_KEY_ID),
    archiveS3SecretAccessKey: nonEmpty(env.HELPDESK_ARCHIVE_S3_SECRET_ACCESS_KEY) ?? nonEmpty(env.AWS_SECRET_ACCESS_KEY),
    archiveBatchSize: intFrom(env, 'HELPDESK_ARCHIVE_BATCH_SIZE', 200, 1),
    heapGrowingPercent: intFrom(env, 'HELPDESK_HEAP_GROWING_PERCENT', 50, 0),
  };
}
