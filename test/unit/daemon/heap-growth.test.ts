import t from 'tap';
import { heapGrowthFor } from '../../../daemon/heap-growth.js';

t.test("the daemon's setting bounds the heap's growth unless Node.js was started with its own", async (t) => {
  t.same(heapGrowthFor(100, []), { percent: 100, source: 'config' }, 'the default applies');
  t.same(heapGrowthFor(60, ['--enable-source-maps', '--max-old-space-size=512']), { percent: 60, source: 'config' }, 'other options leave it to the setting');
  t.same(heapGrowthFor(0, []), { percent: null, source: 'v8-default' }, "0 keeps V8's own sizing");
  for (const option of ['--heap-growing-percent=50', '--heap_growing_percent=50']) {
    t.same(heapGrowthFor(100, ['--perf-basic-prof', option]), { percent: null, source: 'node-command-line' }, `${option} wins`);
  }
  t.same(heapGrowthFor(100, ['--heap-growing-percents=5']), { percent: 100, source: 'config' }, 'another option is not it');
});
