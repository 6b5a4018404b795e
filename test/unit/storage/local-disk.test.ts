import t from 'tap';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { localDiskStore } from '../../../src/storage/local-disk.js';

t.test('the local-disk blob store', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'helpdesk-blobs-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const store = localDiskStore(root);

  await store.put('tenant/one', Readable.from([Buffer.from('hello '), Buffer.from('world')]));
  t.same(await store.stat('tenant/one'), { size: 11 });
  t.equal(await text(await store.get('tenant/one')), 'hello world');
  t.equal(await text(await store.get('tenant/one', { start: 6, end: 10 })), 'world');
  t.equal(await store.stat('tenant/none'), null);
  await t.rejects(store.get('tenant/none'), { code: 'ENOENT' }, 'a missing key fails when opened');

  const failing = new Readable({ read() { this.push('partial'); this.destroy(new Error('client went away')); } });
  await t.rejects(store.put('tenant/two', failing), /client went away/);
  t.same(readdirSync(join(root, 'tenant')).sort(), ['one'], 'a failed put leaves no file, not even a partial one');

  await store.delete('tenant/one');
  await store.delete('tenant/one');
  t.equal(await store.stat('tenant/one'), null, 'deleted, and deleting again is no error');
  await t.rejects(store.stat('../escape'), /leaves the store/, 'a key cannot leave the root');
});
