import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeVendor, loadPlugin, TICKET } from './harness.mjs';

test('fetch_context shows the requester\'s CRM account', async () => {
  const vendor = await fakeVendor({
    'GET /accounts': ({ url, headers }) => headers.authorization === 'Bearer crm-token' && url.searchParams.get('email') === 'ana@example.com'
      ? { json: { name: 'Ana Corp', plan: 'Enterprise', mrr: 4200, url: 'https://crm.example/ana' } }
      : { status: 404 },
  });
  const plugin = await loadPlugin({ base_url: vendor.base, api_token: 'crm-token' });
  try {
    const block = await plugin.call('fetch_context', { ticket: TICKET, link: null });
    assert.equal(block.title, 'CRM');
    assert.deepEqual(block.fields.map((f) => [f.label, f.value]), [['Account', 'Ana Corp'], ['Plan', 'Enterprise'], ['MRR', '4200']]);
    const none = await plugin.call('fetch_context', { ticket: { ...TICKET, requester_email: 'nobody@example.com' }, link: null });
    assert.match(none.fields[0].value, /No account/);
  } finally {
    await plugin.close();
    await vendor.close();
  }
});
