/**
 * Where the daemon's one JavaScript thread spends a scenario's wall time, and how much of the
 * machine stayed idle: the figures that tell whether a write scenario is held back by CPU work or
 * by the thread waiting for a core (docs/performance.md, "The daemon's thread waits for a core").
 *
 * A Node.js daemon serves every request on its main thread. When that thread is runnable but
 * another process (a database backend it has just woken, the load generator) holds its core, it
 * neither works nor sleeps: the requests queue behind it while the CPU counters of bench/suite/cpu.ts
 * show nothing. The kernel counts that time per thread in /proc/<pid>/task/<tid>/schedstat
 * (nanoseconds on a core, nanoseconds runnable and waiting for one); /proc/stat counts the whole
 * machine's idle time. Linux only: elsewhere the figures are null.
 */
import { readFileSync } from 'node:fs';

export interface ScheduleSample {
  /** The daemon's main thread: nanoseconds on a core and runnable but waiting, since it started. */
  mainThread: { runningNs: number; waitingNs: number } | null;
  /** The machine: idle and total time of all cores, in clock ticks. */
  machine: { idle: number; total: number } | null;
  at: bigint;
}

/** Shares of a scenario's wall time (0–1); null where not readable. */
export interface ScheduleShares {
  /** The daemon's main thread on a core. */
  daemon_thread_running: number | null;
  /** The daemon's main thread runnable, waiting for a core. */
  daemon_thread_waiting: number | null;
  /** All cores idle, as a share of the machine's capacity. */
  machine_idle: number | null;
}

/** `/proc/<pid>/task/<tid>/schedstat`: "<on cpu ns> <waiting ns> <timeslices>". */
export function parseSchedstat(text: string): { runningNs: number; waitingNs: number } | null {
  const [running, waiting] = text.trim().split(/\s+/).map(Number);
  return Number.isFinite(running) && Number.isFinite(waiting) ? { runningNs: running!, waitingNs: waiting! } : null;
}

/** The first line of /proc/stat: "cpu user nice system idle iowait irq softirq steal …" in ticks. */
export function parseProcStat(text: string): { idle: number; total: number } | null {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return null;
  // guest and guest_nice (the 9th and 10th values) are already counted in user and nice.
  const values = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (values.length < 5 || values.some((v) => !Number.isFinite(v))) return null;
  return { idle: values[3]! + values[4]!, total: values.reduce((sum, v) => sum + v, 0) };
}

function readOrNull<T>(path: string, parse: (text: string) => T | null): T | null {
  try {
    return parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

/** The daemon's main thread (its thread id is its process id) and the machine, now. */
export function sampleSchedule(daemonPid: number): ScheduleSample {
  return {
    mainThread: readOrNull(`/proc/${daemonPid}/task/${daemonPid}/schedstat`, parseSchedstat),
    machine: readOrNull('/proc/stat', parseProcStat),
    at: process.hrtime.bigint(),
  };
}

/** `part / whole` to three decimals; null when there is no whole to divide by. */
function ratio(part: number, whole: number): number | null {
  return whole > 0 ? Math.round((part / whole) * 1000) / 1000 : null;
}

/** What share of the wall time between two samples the thread ran, waited, and the machine idled. */
export function scheduleShares(before: ScheduleSample, after: ScheduleSample): ScheduleShares {
  const wallNs = Number(after.at - before.at);
  const thread = before.mainThread && after.mainThread;
  const machine = before.machine && after.machine;
  return {
    daemon_thread_running: thread ? ratio(after.mainThread!.runningNs - before.mainThread!.runningNs, wallNs) : null,
    daemon_thread_waiting: thread ? ratio(after.mainThread!.waitingNs - before.mainThread!.waitingNs, wallNs) : null,
    machine_idle: machine ? ratio(after.machine!.idle - before.machine!.idle, after.machine!.total - before.machine!.total) : null,
  };
}
