import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeVendor, loadPlugin, TICKET } from './harness.mjs';

test('the task-tracker operations against a fake tracker', async () => {
  const task = { key: 'TSK-1', title: 'Printer on fire', status: 'open', assignee: 'Bo', priority: 'high', url: 'https://tracker.example/TSK-1', items: [{ id: 'i1', name: 'Call vendor', completed: false }] };
  const vendor = await fakeVendor({
    'GET /projects': () => ({ json: [{ id: 'ops', name: 'Operations' }] }),
    'GET /tasks': ({ url }) => ({ json: [{ key: 'TSK-1', title: `match ${url.searchParams.get('q')}` }] }),
    'GET /tasks/TSK-1': () => ({ json: task }),
    'POST /tasks': ({ body }) => ({ status: 201, json: { ...task, key: 'TSK-2', title: JSON.parse(body).title } }),
    'PUT /tasks/TSK-1/items/i1': ({ body }) => ({ json: { id: 'i1', completed: JSON.parse(body).completed } }),
  });
  const plugin = await loadPlugin({ base_url: vendor.base, api_token: 't' });
  try {
    assert.equal((await plugin.call('fetch_context', { ticket: TICKET, link: null })).fields[0].value, 'Not linked');
    const block = await plugin.call('fetch_context', { ticket: TICKET, link: 'TSK-1' });
    assert.deepEqual(block.checklist, [{ id: 'i1', name: 'Call vendor', completed: false }]);
    assert.equal((await plugin.call('create_form', {})).fields[0].options_op, 'list_projects');
    assert.deepEqual(await plugin.call('list_projects', {}), { options: [{ value: 'ops', label: 'Operations' }] });
    assert.equal((await plugin.call('search_tasks', { q: 'fire' })).options[0].label, 'match fire');
    const created = await plugin.call('create_task', { values: { project: 'ops', title: 'New one' }, ticket: TICKET });
    assert.deepEqual(created, { key: 'TSK-2', title: 'New one', status: 'open', assignee: 'Bo', priority: 'high', url: 'https://tracker.example/TSK-1' });
    assert.deepEqual(await plugin.call('link_task', { external_id: 'TSK-1', ticket: TICKET }), { linked: true });
    const toggled = await plugin.call('toggle_item', { params: { item_id: 'i1', completed: 'true' }, ticket: TICKET, link: 'TSK-1' });
    assert.equal(toggled.summary, 'item i1 done');
    assert.equal(vendor.calls.at(-1).body, '{"completed":true}');
  } finally {
    await plugin.close();
    await vendor.close();
  }
});
