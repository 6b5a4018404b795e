import t from 'tap';
import { isUuid, randomToken, uuidv7 } from '../../../src/core/ids.js';

t.test('uuidv7 is a valid, time-ordered UUID', async (t) => {
  const a = uuidv7(1_700_000_000_000);
  const b = uuidv7(1_700_000_000_001);
  t.ok(isUuid(a));
  t.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.ok(a < b, 'a later millisecond sorts later');
  t.equal(a.slice(0, 13).replace('-', ''), (1_700_000_000_000).toString(16).padStart(12, '0'));
  t.not(uuidv7(5), uuidv7(5), 'random bits differ within one millisecond');
});

t.test('uuidv7 keeps the order of ids made within one millisecond', async (t) => {
  const ids = Array.from({ length: 2048 }, () => uuidv7(1_700_000_000_000));
  t.same([...ids].sort(), ids, 'made in order, sorted in order');
  t.equal(new Set(ids).size, ids.length, 'all distinct');
  const many = Array.from({ length: 6000 }, () => uuidv7(1_700_000_000_002));
  t.equal(new Set(many).size, many.length, 'past the counter, still distinct');
  t.ok(many.every(isUuid));
});

t.test('uuidv7 carries any millisecond of its 48 bits exactly, with version 7 and the RFC variant', async (t) => {
  const stamps = [0, 1, 0xffffff, 0x1000000, 2 ** 48 - 1, ...Array.from({ length: 1000 }, () => Math.floor(Math.random() * 2 ** 48))];
  for (const ms of stamps) {
    const id = uuidv7(ms);
    const hex = id.replace(/-/g, '');
    if (parseInt(hex.slice(0, 12), 16) !== ms || hex[12] !== '7' || !'89ab'.includes(hex[16]!) || !isUuid(id)) {
      t.fail(`${ms} gave ${id}`);
      return;
    }
  }
  t.pass(`${stamps.length} instants read back from their ids`);
});

t.test('isUuid refuses non-UUIDs', async (t) => {
  for (const bad of ['', 'abc', '1; drop table users', '00000000-0000-0000-0000-00000000000g', 42, null]) t.notOk(isUuid(bad));
});

t.test('randomToken has the requested entropy', async (t) => {
  t.equal(Buffer.from(randomToken(32), 'base64url').length, 32);
});
