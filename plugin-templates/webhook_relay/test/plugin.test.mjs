import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeVendor, loadPlugin } from './harness.mjs';

const request = (method, headers = {}, body = '', query = {}) =>
  ({ method, path: '/api/v1/integrations/extensions/hook/x', query, headers, body_base64: Buffer.from(body).toString('base64') });

test('handshake, secret check, relay, duplicates, retry on relay failure', async () => {
  let up = true;
  const target = await fakeVendor({ 'POST /events': () => (up ? { json: { ok: true } } : { status: 500 }) });
  const plugin = await loadPlugin({ webhook_secret: 'whs', relay_url: `${target.base}/events` });
  try {
    assert.deepEqual(await plugin.call('webhook_receive', request('GET', {}, '', { challenge: 'c-1' })), { status: 200, headers: { 'content-type': 'text/plain' }, body: 'c-1' });
    assert.equal((await plugin.call('webhook_receive', request('POST', { 'x-webhook-secret': 'wrong' }, '{}'))).status, 401);
    const ok = await plugin.call('webhook_receive', request('POST', { 'x-webhook-secret': 'whs', 'x-event-id': 'e1' }, '{"a":1}'));
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(target.calls[0].body).body_base64, Buffer.from('{"a":1}').toString('base64'));
    assert.equal((await plugin.call('webhook_receive', request('POST', { 'x-webhook-secret': 'whs', 'x-event-id': 'e1' }, '{"a":1}'))).body, 'duplicate');
    up = false;
    assert.equal((await plugin.call('webhook_receive', request('POST', { 'x-webhook-secret': 'whs', 'x-event-id': 'e2' }, '{}'))).status, 503);
  } finally {
    await plugin.close();
    await target.close();
  }
});
