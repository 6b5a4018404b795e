/**
 * CPU time per request, for each scenario of the suite: the daemon's (all its threads), the
 * database server's (every `postgres` process: backends, WAL writer, checkpointer) and the load
 * generator's (this process, autocannon).
 *
 * Requests per second depend on the machine: healthz alone ranged from 8,800 to 35,000 req/s on
 * the 2-core machines the suite has run on, and consecutive runs on one machine moved by up to
 * ±40 %. CPU milliseconds per request move far less, so they are what compares a change, or a
 * machine, with another (docs/performance.md). On a machine whose cores are all busy, cores
 * divided by the sum of the three is the ceiling of the scenario's throughput.
 *
 * Read from /proc, so Linux only, and the database's share only when its server runs on this
 * machine (a loopback address); elsewhere the figures are null. A process that starts and ends
 * within one scenario is not counted; the daemon's pool keeps its connections, so none does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

export interface CpuSample {
  daemon: number | null;
  database: number | null;
  loadGenerator: number;
}

export interface CpuPerRequest {
  daemon_ms: number | null;
  database_ms: number | null;
  load_generator_ms: number;
}

let ticksPerSecond: number | null = null;

/** The kernel's clock ticks per second (USER_HZ) that /proc's CPU times count in. */
function clockTicks(): number {
  if (ticksPerSecond === null) {
    const answer = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    ticksPerSecond = Number(answer.stdout?.trim()) || 100;
  }
  return ticksPerSecond;
}

/** utime + stime of one process in seconds, with its name; null when it is gone or not Linux. */
function processCpu(pid: number): { name: string; seconds: number } | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The name is in parentheses and may itself hold spaces or parentheses: split after the last ')'.
  const close = stat.lastIndexOf(')');
  const name = stat.slice(stat.indexOf('(') + 1, close);
  const fields = stat.slice(close + 2).split(' ');
  // Fields 14 and 15 of the line (utime, stime) are the 12th and 13th after the name.
  return { name, seconds: (Number(fields[11]) + Number(fields[12])) / clockTicks() };
}

/** Total CPU seconds of every process named `postgres` (the server on this machine). */
export function databaseCpu(): number | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return null;
  }
  let seconds = 0;
  let found = false;
  for (const pid of pids) {
    const cpu = processCpu(Number(pid));
    if (cpu?.name === 'postgres') {
      seconds += cpu.seconds;
      found = true;
    }
  }
  return found ? seconds : null;
}

/** Whether a database URL points at this machine, so its server's processes can be read. */
export function isLocalDatabase(url: string): boolean {
  const host = decodeURIComponent(new URL(url).hostname);
  // A socket directory (`postgres://user@%2Fvar%2Frun%2Fpostgresql/db`) is always this machine.
  return host.startsWith('/') || host === '' || host === 'localhost' || host === '127.0.0.1' || host === '[::1]' || host === '::1';
}

/** CPU seconds so far of the daemon, the local database server and this process. */
export function sampleCpu(daemonPid: number, localDatabase: boolean): CpuSample {
  const usage = process.cpuUsage();
  return {
    daemon: processCpu(daemonPid)?.seconds ?? null,
    database: localDatabase ? databaseCpu() : null,
    loadGenerator: (usage.user + usage.system) / 1e6,
  };
}

/** CPU milliseconds per request between two samples. */
export function cpuPerRequest(before: CpuSample, after: CpuSample, requests: number): CpuPerRequest | null {
  if (requests <= 0) return null;
  const per = (a: number | null, b: number | null) => (a === null || b === null ? null : Math.round(((b - a) * 1000 / requests) * 1000) / 1000);
  return {
    daemon_ms: per(before.daemon, after.daemon),
    database_ms: per(before.database, after.database),
    load_generator_ms: per(before.loadGenerator, after.loadGenerator)!,
  };
}
