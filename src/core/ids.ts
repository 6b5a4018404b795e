import { randomBytes } from 'node:crypto';

/**
 * UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, a 12-bit counter, then randomness. Time-ordered
 * ids keep B-tree inserts at the right edge and make `id` a usable tie-breaker for keyset
 * pagination. Every row of one operation carries the same `ctx.now`, so within one millisecond the
 * counter (RFC 9562 §6.2, method 1) keeps this process's ids in the order they were made: a reply
 * and the status change it caused, the files of one upload, list in the order they happened. It
 * starts at a random value below 2048 per millisecond; past 4095 ids in one millisecond the rest
 * are random again (still unique: 62 random bits follow).
 */
let counterMs = -1;
let counter = 0;

/**
 * Random bytes drawn 4 KiB at a time: one system call per 256 ids instead of one per id (bulk
 * imports make hundreds of thousands). Each id copies its 16 bytes out, so no two share any.
 */
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

function random16(): Buffer {
  if (poolOffset + 16 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + 16));
  poolOffset += 16;
  return bytes;
}

export function uuidv7(nowMs: number = Date.now()): string {
  const bytes = random16();
  const ms = BigInt(nowMs);
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  if (nowMs === counterMs && counter < 0xfff) counter += 1;
  else {
    counterMs = nowMs;
    counter = ((bytes[6]! << 8) | bytes[7]!) & 0x7ff;
  }
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

/** URL-safe random text with `bytes` bytes of entropy (tokens, codes, passwords). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
