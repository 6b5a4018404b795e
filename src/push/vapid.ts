import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import webpush from 'web-push';
import type { Config } from '../core/config.js';
import { ensureDataDir, inDataDir } from '../core/data-dir.js';

/**
 * The instance's VAPID key pair (RFC 8292), in the form web-push generates: base64url of the raw
 * 65-byte uncompressed public point and the 32-byte private scalar. From the environment when both
 * are set, else generated once into `<data dir>/vapid.json` (0600) and read from there after, so
 * browsers' subscriptions (bound to the public key) survive restarts.
 */
export interface VapidKeys { publicKey: string; privateKey: string }

const cache = new Map<string, VapidKeys>();

function checkKeys(keys: VapidKeys, origin: string): VapidKeys {
  const pub = Buffer.from(keys.publicKey, 'base64url');
  const priv = Buffer.from(keys.privateKey, 'base64url');
  if (pub.length !== 65 || pub[0] !== 4 || priv.length !== 32) {
    throw new Error(`${origin}: a VAPID key pair is base64url of a 65-byte public and a 32-byte private P-256 key`);
  }
  return keys;
}

export function vapidKeys(config: Pick<Config, 'dataDir' | 'vapidPublicKey' | 'vapidPrivateKey'>): VapidKeys {
  if (config.vapidPublicKey || config.vapidPrivateKey) {
    if (!config.vapidPublicKey || !config.vapidPrivateKey) throw new Error('Set both HELPDESK_VAPID_PUBLIC_KEY and HELPDESK_VAPID_PRIVATE_KEY, or neither');
    return checkKeys({ publicKey: config.vapidPublicKey, privateKey: config.vapidPrivateKey }, 'HELPDESK_VAPID_*');
  }
  const file = join(config.dataDir, 'vapid.json');
  const cached = cache.get(file);
  if (cached) return cached;
  let keys: VapidKeys;
  if (existsSync(file)) {
    keys = JSON.parse(inDataDir(config.dataDir, `read ${file}`, () => readFileSync(file, 'utf8'))) as VapidKeys;
  } else {
    ensureDataDir(config.dataDir);
    keys = webpush.generateVAPIDKeys();
    try {
      inDataDir(config.dataDir, `write ${file}`, () => writeFileSync(file, JSON.stringify(keys) + '\n', { mode: 0o600, flag: 'wx' }));
    } catch (error) {
      // Another process wrote it first: use theirs, so every process signs with one pair.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      keys = JSON.parse(readFileSync(file, 'utf8')) as VapidKeys;
    }
  }
  cache.set(file, checkKeys(keys, file));
  return keys;
}
