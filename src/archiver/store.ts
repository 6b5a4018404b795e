import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../core/config.js';

/**
 * The archive's object store (CONTRACT §19): `file://` (default: `<data dir>/archive`) or any
 * S3-compatible store (`s3://bucket/prefix`, `HELPDESK_ARCHIVE_S3_ENDPOINT`). Keys are relative
 * paths of our own making. Credentials come from the environment only and are never shown:
 * `describe()` names the place without them.
 */
export interface ObjectStore {
  put(key: string, body: Uint8Array): Promise<void>;
  get(key: string): Promise<Uint8Array>;
  delete(key: string): Promise<void>;
  /** The place, for logs and status: `file:///…` or `s3://bucket/prefix`, never a secret. */
  describe(): string;
}

export function fileStore(root: string): ObjectStore {
  const base = resolve(root);
  const pathOf = (key: string) => {
    const path = resolve(base, key);
    if (!path.startsWith(base + sep)) throw new Error(`Archive key ${key} leaves the store`);
    return path;
  };
  return {
    async put(key, body) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      // Written aside and renamed: a reader (or a crash) never sees half a file under the key.
      const partial = `${path}.partial`;
      await writeFile(partial, body, { mode: 0o600 });
      await rename(partial, path);
    },
    async get(key) {
      return new Uint8Array(await readFile(pathOf(key)));
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
    describe: () => `file://${base}`,
  };
}

export interface S3Options {
  bucket: string;
  prefix: string;
  endpoint: string | null;
  region: string;
  accessKeyId: string | null;
  secretAccessKey: string | null;
}

export function s3Store(options: S3Options): ObjectStore {
  // The SDK loads on first use: a daemon that archives nothing does not keep it in memory
  // (docs/performance.md).
  let sdk: Promise<{ client: S3Client; s3: typeof import('@aws-sdk/client-s3') }> | null = null;
  const open = () => (sdk ??= import('@aws-sdk/client-s3').then((s3) => ({ s3, client: new s3.S3Client({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
    ...(options.accessKeyId && options.secretAccessKey
      ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
      : {}),
    // Recent SDKs add CRC32 checksums to every request by default; S3-compatible servers that do
    // not know them refuse the upload. We verify every object ourselves (SHA-256, read back).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  }) })));
  const keyOf = (key: string) => (options.prefix ? `${options.prefix}/${key}` : key);
  return {
    async put(key, body) {
      const { client, s3 } = await open();
      await client.send(new s3.PutObjectCommand({ Bucket: options.bucket, Key: keyOf(key), Body: body, ContentType: 'application/vnd.apache.parquet' }));
    },
    async get(key) {
      const { client, s3 } = await open();
      const out = await client.send(new s3.GetObjectCommand({ Bucket: options.bucket, Key: keyOf(key) }));
      if (!out.Body) throw new Error(`Archive object ${key} has no body`);
      return out.Body.transformToByteArray();
    },
    async delete(key) {
      const { client, s3 } = await open();
      await client.send(new s3.DeleteObjectCommand({ Bucket: options.bucket, Key: keyOf(key) }));
    },
    describe: () => `s3://${options.bucket}${options.prefix ? `/${options.prefix}` : ''}`,
  };
}

type StoreConfig = Pick<Config, 'dataDir' | 'archiveUrl' | 'archiveS3Endpoint' | 'archiveS3Region' | 'archiveS3AccessKeyId' | 'archiveS3SecretAccessKey'>;

const cache = new WeakMap<StoreConfig, ObjectStore>();

/** The store of this configuration (one client per configuration and process). */
export function archiveStoreFor(config: StoreConfig): ObjectStore {
  const url = config.archiveUrl ?? `file://${join(config.dataDir, 'archive')}`;
  let store = cache.get(config);
  if (store) return store;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('HELPDESK_ARCHIVE_URL must be file:///path or s3://bucket/prefix');
  }
  if (parsed.protocol === 'file:') {
    store = fileStore(fileURLToPath(parsed));
  } else if (parsed.protocol === 's3:' && parsed.hostname) {
    store = s3Store({
      bucket: parsed.hostname,
      prefix: decodeURIComponent(parsed.pathname).replace(/^\/+|\/+$/g, ''),
      endpoint: config.archiveS3Endpoint,
      region: config.archiveS3Region,
      accessKeyId: config.archiveS3AccessKeyId,
      secretAccessKey: config.archiveS3SecretAccessKey,
    });
  } else {
    throw new Error('HELPDESK_ARCHIVE_URL must be file:///path or s3://bucket/prefix');
  }
  cache.set(config, store);
  return store;
}
