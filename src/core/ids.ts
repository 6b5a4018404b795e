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
 * Random bytes drawn 4 KiB at a time: one system call per 409 ids instead of one per id (bulk
 * imports make hundreds of thousands). Each id reads its own 10 bytes, so no two share any.
 */
const POOL_SIZE = 4096;
const RANDOM_PER_ID = 10;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/**
 * Every request and every row take one, so the text is built from a byte-to-hex table with
 * number arithmetic (the 48-bit time as two 24-bit halves), without BigInt or a Buffer per id.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  if (poolOffset + RANDOM_PER_ID > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const r = poolOffset;
  poolOffset += RANDOM_PER_ID;
  if (nowMs === counterMs && counter < 0xfff) counter += 1;
  else {
    counterMs = nowMs;
    counter = ((pool[r]! << 8) | pool[r + 1]!) & 0x7ff;
  }
  const high = Math.floor(nowMs / 0x1000000);
  const low = nowMs - high * 0x1000000;
  return HEX[(high >>> 16) & 0xff]! + HEX[(high >>> 8) & 0xff]! + HEX[high & 0xff]! + HEX[(low >>> 16) & 0xff]!
    + '-' + HEX[(low >>> 8) & 0xff]! + HEX[low & 0xff]!
    + '-' + HEX[0x70 | (counter >> 8)]! + HEX[counter & 0xff]!
    + '-' + HEX[(pool[r + 2]! & 0x3f) | 0x80]! + HEX[pool[r + 3]!]!
    + '-' + HEX[pool[r + 4]!]! + HEX[pool[r + 5]!]! + HEX[pool[r + 6]!]! + HEX[pool[r + 7]!]! + HEX[pool[r + 8]!]! + HEX[pool[r + 9]!]!;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

/** URL-safe random text with `bytes` bytes of entropy (tokens, codes, passwords). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
