import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeVendor, loadPlugin, TICKET } from './harness.mjs';

test('the channel panel, posting an update, listing channels', async () => {
  const vendor = await fakeVendor({
    'GET /channels': () => ({ json: [{ id: 'c-ops', name: '#ops' }] }),
    'GET /channels/c-ops/messages': () => ({ json: [{ author: 'bo', text: 'looking at it' }] }),
    'POST /channels/c-ops/messages': () => ({ status: 201, json: { id: 'm1' } }),
  });
  const plugin = await loadPlugin({ base_url: vendor.base, bot_token: 'b', default_channel: 'c-ops' });
  try {
    const block = await plugin.call('fetch_context', { ticket: TICKET, link: null });
    assert.deepEqual(block.fields, [{ label: 'Channel', value: 'c-ops' }, { label: 'bo', value: 'looking at it' }]);
    assert.deepEqual(await plugin.call('post_update', { params: {}, ticket: TICKET, link: null }), { summary: 'posted to c-ops' });
    assert.equal(JSON.parse(vendor.calls.at(-1).body).text, '#42 Printer on fire');
    assert.deepEqual(await plugin.call('list_channels', {}), { options: [{ value: 'c-ops', label: '#ops' }] });
  } finally {
    await plugin.close();
    await vendor.close();
  }
});
