import { createServer, type Server } from 'node:http';
import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify, type ECDH } from 'node:crypto';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server playing a browser vendor's push service (RFC 8030): it checks each request's
 * VAPID authorisation (RFC 8292: a `vapid t=<JWT>, k=<key>` header whose ES256 JWT is signed by
 * that key, for this origin, not expired) and decrypts the `aes128gcm` body (RFC 8188 + RFC 8291)
 * with the subscription's private key, as the browser would. Tests read what arrived.
 */
export interface Received {
  subscription: string;
  headers: Record<string, string | string[] | undefined>;
  vapid: { key: string; claims: Record<string, unknown> };
  payload: Record<string, unknown>;
}

export interface FakeBrowser {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  ecdh: ECDH;
  authSecret: Buffer;
}

const b64u = (b: Buffer) => b.toString('base64url');

export function decryptAes128gcm(body: Buffer, browser: Pick<FakeBrowser, 'ecdh' | 'authSecret'>): Buffer {
  const salt = body.subarray(0, 16);
  const idlen = body[20]!;
  const serverPublic = body.subarray(21, 21 + idlen);
  const ciphertext = body.subarray(21 + idlen);
  const ecdhSecret = browser.ecdh.computeSecret(serverPublic);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), browser.ecdh.getPublicKey(), serverPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, browser.authSecret, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()]);
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end -= 1;
  if (padded[end] !== 2) throw new Error('no last-record padding delimiter');
  return padded.subarray(0, end);
}

function checkVapid(header: string | undefined, origin: string): { key: string; claims: Record<string, unknown> } {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!match) throw new Error(`no vapid authorization: ${header}`);
  const [, jwt, key] = match;
  const [h, p, s] = jwt!.split('.');
  const head = JSON.parse(Buffer.from(h!, 'base64url').toString());
  if (head.alg !== 'ES256') throw new Error(`alg ${head.alg}`);
  const raw = Buffer.from(key!, 'base64url');
  const publicKey = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b64u(raw.subarray(1, 33)), y: b64u(raw.subarray(33, 65)) }, format: 'jwk' });
  const ok = verify('sha256', Buffer.from(`${h}.${p}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(s!, 'base64url'));
  if (!ok) throw new Error('bad VAPID signature');
  const claims = JSON.parse(Buffer.from(p!, 'base64url').toString()) as { aud: string; exp: number; sub: string };
  if (claims.aud !== origin) throw new Error(`aud ${claims.aud} is not ${origin}`);
  const now = Date.now() / 1000;
  if (!(claims.exp > now && claims.exp <= now + 24 * 3600 + 60)) throw new Error(`exp ${claims.exp} out of range`);
  if (!/^(mailto:|https:)/.test(claims.sub)) throw new Error(`sub ${claims.sub}`);
  return { key: key!, claims };
}

export class FakePushService {
  readonly received: Received[] = [];
  readonly rejected: string[] = [];
  /** Status to answer per subscription path (default 201). */
  readonly answers = new Map<string, number>();
  private readonly browsers = new Map<string, FakeBrowser>();
  private server!: Server;
  origin = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '';
        const status = this.answers.get(path) ?? 201;
        try {
          const browser = this.browsers.get(path);
          if (!browser) throw new Error(`unknown subscription ${path}`);
          if (req.headers['content-encoding'] !== 'aes128gcm') throw new Error(`content-encoding ${req.headers['content-encoding']}`);
          const vapid = checkVapid(req.headers.authorization, this.origin);
          const payload = JSON.parse(decryptAes128gcm(Buffer.concat(chunks), browser).toString('utf8'));
          if (status < 300) this.received.push({ subscription: path, headers: req.headers, vapid, payload });
          res.writeHead(status).end();
        } catch (error) {
          this.rejected.push((error as Error).message);
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** A new browser subscription: a P-256 key pair and an auth secret, as a browser generates them. */
  browser(): FakeBrowser {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const authSecret = randomBytes(16);
    const path = `/push/${randomBytes(8).toString('hex')}`;
    const browser = { endpoint: this.origin + path, keys: { p256dh: b64u(ecdh.getPublicKey()), auth: b64u(authSecret) }, ecdh, authSecret };
    this.browsers.set(path, browser);
    return browser;
  }

  for(browser: FakeBrowser): Received[] {
    return this.received.filter((r) => this.origin + r.subscription === browser.endpoint);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
