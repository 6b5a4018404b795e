import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeVendor, loadPlugin, TICKET } from './harness.mjs';

test('the channel panel, posting an update, listing channels', async () => {
  const vendor = await fakeVendor({
    'GET /channels': () => ({ json: [{ id: 'c-ops', name: '#ops' }] }),
    'GET /channels/c-ops/messages': () => ({ json: [{ author: 'bo', text: 'looking at it' }] }),
    'POST /channels/c-ops/messages': () => ({ status: 201, json: { id: 'm1' } }),
    'POST /channels/c-ops/threads': () => ({ status: 201, json: { id: 't-9', url: 'https://chat.example/t-9' } }),
    'POST /channels/c-ops/threads/t-9/messages': () => ({ status: 201, json: { id: 'm2' } }),
  });
  const plugin = await loadPlugin({ base_url: vendor.base, bot_token: 'b', default_channel: 'c-ops' });
  try {
    const block = await plugin.call('fetch_context', { ticket: TICKET, link: null });
    assert.deepEqual(block.fields, [{ label: 'Channel', value: 'c-ops' }, { label: 'bo', value: 'looking at it' }]);
    assert.deepEqual(await plugin.call('post_update', { params: {}, ticket: TICKET, link: null }), { summary: 'posted to c-ops' });
    assert.equal(JSON.parse(vendor.calls.at(-1).body).text, '#42 Printer on fire');
    assert.deepEqual(await plugin.call('list_channels', {}), { options: [{ value: 'c-ops', label: '#ops' }] });
    assert.deepEqual(await plugin.call('open_thread', { ticket: TICKET, channel_id: 'c-ops', channel_name: '#ops' }), { thread_id: 't-9', url: 'https://chat.example/t-9' });
    assert.equal(JSON.parse(vendor.calls.at(-1).body).title, '#42 Printer on fire');
    assert.deepEqual(await plugin.call('post_thread_note', { channel_id: 'c-ops', thread_id: 't-9', body: 'On site now', author: { name: 'Bo' }, ticket: TICKET }), { id: 'm2' });
    assert.equal(JSON.parse(vendor.calls.at(-1).body).text, 'Bo: On site now');
  } finally {
    await plugin.close();
    await vendor.close();
  }
});
