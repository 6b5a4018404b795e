import t from 'tap';
import { Writable } from 'node:stream';
import { bar, duration, progressLine, progressModel } from '../../../src/legacy-import/progress.js';
import { startProgressView } from '../../../src/cli/views/import-progress.js';
import { RESULT_KEYS, type ImportResult } from '../../../src/legacy-import/writer.js';

const zero = () => Object.fromEntries(RESULT_KEYS.map((k) => [k, 0])) as ImportResult['counts'];
const totals = { teams: 3, agents: 3, organizations: 1, customers: 5, ticket_types: 1, tickets: 100, thread_entries: 500, attachments: 10 };

function halfway(): ImportResult {
  const counts = { ...zero(), teams: 2, agents: 3, organizations: 1, customers: 5, ticket_types: 1, tickets: 100, messages: 150 };
  const skipped = { ...zero(), teams: 1, notes: 50 };
  return { dry_run: false, counts, skipped, errors: [{ kind: 'message', legacy_id: '7', message: 'x' }] };
}

t.test('the view model: bars per entity, rate and time left', async (t) => {
  const model = progressModel(totals, 'messages', halfway(), 10_000);
  const byKey = Object.fromEntries(model.bars.map((b) => [b.key, b]));
  t.match(byKey.tickets, { done: 100, total: 100, fraction: 1 });
  t.match(byKey.thread_entries, { label: 'thread entries', done: 200, total: 500, fraction: 0.4 }, 'messages and notes, created or skipped');
  t.match(byKey.attachments, { done: 0, total: 10, fraction: 0 });
  t.match(byKey.teams, { done: 3, fraction: 1 });
  t.equal(model.rows, 2 + 3 + 1 + 5 + 1 + 100 + 150 + 1 + 50 + 1, 'every row handled, errors too');
  t.equal(model.rate, model.rows / 10);
  const left = 623 - (3 + 3 + 1 + 5 + 1 + 100 + 200);
  t.equal(model.etaSeconds, left / model.rate);
  t.equal(model.errors, 1);
  t.equal(progressLine(model), `thread entries 200/500, ${model.rows} rows, ${model.rate.toFixed(0)} rows/s, 1 errors, ETA ${duration(model.etaSeconds)}`);
});

t.test('edge cases: no rows yet, a finished run, more rows than the probe counted', async (t) => {
  const empty: ImportResult = { dry_run: false, counts: zero(), skipped: zero(), errors: [] };
  t.equal(progressModel(totals, 'teams', empty, 0).etaSeconds, null);
  t.ok(progressModel(totals, 'done', halfway(), 5000).bars.every((b) => b.fraction === 1), 'every bar full at the end');
  const over = progressModel({ ...totals, tickets: 50 }, 'tickets', halfway(), 1000);
  t.match(over.bars.find((b) => b.key === 'tickets'), { done: 100, total: 100, fraction: 1 });
  t.equal(progressModel({}, 'tickets', halfway(), 1000).bars.find((b) => b.key === 'thread_entries')!.total, 200, 'unknown totals: what is done');
  t.equal(bar(0.5, 10), '[#####.....]');
  t.equal(bar(2, 4), '[####]');
  t.equal(duration(null), '--');
  t.equal(duration(42), '42s');
  t.equal(duration(185), '3m05s');
  t.equal(duration(3720), '1h02m');
});

t.test('the ink view draws every bar, the rate and the ETA to its stream', async (t) => {
  let out = '';
  const stream = Object.assign(new Writable({ write(chunk, _enc, done) { out += String(chunk); done(); } }), { columns: 100, rows: 40, isTTY: false });
  const view = startProgressView(stream as unknown as NodeJS.WriteStream);
  view.update(progressModel(totals, 'tickets', { dry_run: false, counts: { ...zero(), tickets: 40 }, skipped: zero(), errors: [] }, 2000));
  view.update(progressModel(totals, 'messages', halfway(), 10_000));
  await view.stop();
  const last = out.slice(out.lastIndexOf('teams'));
  t.match(last, /teams\s+\[#{24}\] 3\/3/);
  t.match(last, /thread entries\s+\[#{10}\.{14}\] 200\/500/);
  t.match(last, /attachments\s+\[\.{24}\] 0\/10/);
  t.match(last, /rows\/s {2}elapsed 10s {2}ETA \d+s {2}1 errors/);
});
