import t from 'tap';
import { CredentialCache, type CachedCredential } from '../../../src/core/credential-cache.js';

/** The rules of the credential cache on their own; the integration test shows them through the API. */
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 28, 9, 0, seconds));

function listeningCache(options: { ttlMs?: number; maxEntries?: number } = {}) {
  let started = 0;
  const cache = new CredentialCache<CachedCredential & { name: string }>({
    ttlMs: options.ttlMs ?? 5000, maxEntries: options.maxEntries ?? 100, start: () => { started += 1; },
  });
  cache.get('nothing', at(0));
  cache.setListening(true);
  return { cache, started: () => started };
}

const entry = (tenantId: string, name: string, expiresAt: Date | null = null) => ({ tenantId, expiresAt, name });

t.test('nothing is kept or answered until LISTEN is active, nor after it is lost', async (t) => {
  const cache = new CredentialCache<CachedCredential>({ ttlMs: 5000, maxEntries: 10 });
  cache.put(cache.ticket(), 'h', entry('a', 'x'), at(0));
  t.equal(cache.get('h', at(0)), null, 'not listening yet: not kept');
  cache.setListening(true);
  cache.put(cache.ticket(), 'h', entry('a', 'x'), at(0));
  t.ok(cache.get('h', at(1)), 'kept once listening');
  cache.setListening(false);
  t.equal(cache.size, 0, 'the loss forgets everything');
  cache.put(cache.ticket(), 'h', entry('a', 'x'), at(1));
  t.equal(cache.get('h', at(1)), null, 'and nothing is kept meanwhile');
  cache.setListening(true);
  t.equal(cache.get('h', at(1)), null, 'back: starts empty');
});

t.test('starts listening on first use, and never with caching off', async (t) => {
  const { started } = listeningCache();
  t.equal(started(), 1);
  let off = 0;
  const disabled = new CredentialCache<CachedCredential>({ ttlMs: 0, maxEntries: 10, start: () => { off += 1; } });
  disabled.setListening(true);
  disabled.put(disabled.ticket(), 'h', entry('a', 'x'), at(0));
  t.equal(disabled.get('h', at(0)), null, 'TTL 0: no caching');
  t.equal(off, 0, 'and no LISTEN');
});

t.test('an entry is trusted for the TTL, never at or past its expiry, never for a clock gone back', async (t) => {
  const { cache } = listeningCache({ ttlMs: 5000 });
  cache.put(cache.ticket(), 'h', entry('a', 'x'), at(10));
  t.ok(cache.get('h', at(14)));
  t.equal(cache.get('h', at(15)), null, 'a TTL old');
  cache.put(cache.ticket(), 'h', entry('a', 'x', at(12)), at(10));
  t.ok(cache.get('h', at(11)));
  t.equal(cache.get('h', at(12)), null, 'expired, by the time asked with');
  cache.put(cache.ticket(), 'h', entry('a', 'x'), at(10));
  t.equal(cache.get('h', at(9)), null, 'asked before it was stored');
});

t.test('a lookup that ran while anything was forgotten keeps nothing', async (t) => {
  const { cache } = listeningCache();
  const ticket = cache.ticket();
  cache.forgetTenant('b');
  cache.put(ticket, 'h', entry('a', 'read before the change'), at(0));
  t.equal(cache.get('h', at(0)), null);
  const later = cache.ticket();
  cache.put(later, 'h', entry('a', 'read after'), at(0));
  t.equal(cache.get('h', at(0))?.name, 'read after');
});

t.test('forgetting is per tenant', async (t) => {
  const { cache } = listeningCache();
  cache.put(cache.ticket(), 'a1', entry('a', 'x'), at(0));
  cache.put(cache.ticket(), 'a2', entry('a', 'y'), at(0));
  cache.put(cache.ticket(), 'b1', entry('b', 'z'), at(0));
  cache.forgetTenant('a');
  t.equal(cache.get('a1', at(0)), null);
  t.equal(cache.get('a2', at(0)), null);
  t.ok(cache.get('b1', at(0)), 'another tenant keeps its entries');
  cache.forgetAll();
  t.equal(cache.size, 0);
});

t.test('the size is bounded, the oldest stored going first', async (t) => {
  const { cache } = listeningCache({ maxEntries: 3 });
  for (const hash of ['h1', 'h2', 'h3']) cache.put(cache.ticket(), hash, entry('a', hash), at(0));
  cache.put(cache.ticket(), 'h1', entry('a', 'h1 again'), at(1));
  cache.put(cache.ticket(), 'h4', entry('a', 'h4'), at(1));
  t.equal(cache.size, 3);
  t.equal(cache.get('h2', at(1)), null, 'the oldest went');
  t.same(['h1', 'h3', 'h4'].map((h) => cache.get(h, at(1))?.name), ['h1 again', 'h3', 'h4']);
});
