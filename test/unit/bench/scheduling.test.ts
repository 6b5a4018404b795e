import { existsSync } from 'node:fs';
import t from 'tap';
import { parseProcStat, parseSchedstat, sampleSchedule, scheduleShares, type ScheduleSample } from '../../../bench/suite/scheduling.js';

t.test('a thread\'s schedstat line gives its time on a core and its time waiting for one', async (t) => {
  t.same(parseSchedstat('42755981322 12346991327 28024\n'), { runningNs: 42755981322, waitingNs: 12346991327 });
  t.equal(parseSchedstat(''), null);
  t.equal(parseSchedstat('garbage'), null);
});

t.test('the machine\'s idle time counts idle and iowait against every state but the guests', async (t) => {
  const stat = 'cpu  167162 0 58454 938361 4384 0 13663 0 7 9\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 1 2\n';
  t.same(parseProcStat(stat), { idle: 938361 + 4384, total: 167162 + 58454 + 938361 + 4384 + 13663 });
  t.equal(parseProcStat('intr 1 2\n'), null);
});

t.test('shares are taken of the wall time between two samples', async (t) => {
  const before: ScheduleSample = { mainThread: { runningNs: 1e9, waitingNs: 5e8 }, machine: { idle: 100, total: 1000 }, at: 0n };
  const after: ScheduleSample = { mainThread: { runningNs: 1e9 + 3.2e9, waitingNs: 5e8 + 1.8e9 }, machine: { idle: 250, total: 2000 }, at: 5_000_000_000n };
  t.same(scheduleShares(before, after), { daemon_thread_running: 0.64, daemon_thread_waiting: 0.36, machine_idle: 0.15 });
  t.same(scheduleShares({ ...before, mainThread: null, machine: null }, after), { daemon_thread_running: null, daemon_thread_waiting: null, machine_idle: null });
});

t.test('on Linux this process\'s own main thread and the machine are read', { skip: !existsSync('/proc/self/task') }, async (t) => {
  const before = sampleSchedule(process.pid);
  const until = Date.now() + 30;
  while (Date.now() < until); // busy, so the thread's running time grows
  const shares = scheduleShares(before, sampleSchedule(process.pid));
  t.ok(shares.daemon_thread_running !== null && shares.daemon_thread_running > 0, 'the thread ran');
  t.ok(shares.daemon_thread_waiting !== null && shares.daemon_thread_waiting >= 0);
  t.ok(shares.machine_idle !== null && shares.machine_idle >= 0 && shares.machine_idle <= 1);
});
