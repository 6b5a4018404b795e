import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDirError, ensureDataDir } from '../src/core/data-dir.js';
import { errors } from '../src/core/errors.js';

/**
 * One `serve` per data dir: two daemons owning the same embedded cluster would stop it under each
 * other. `<dataDir>/serve.lock` holds the owner's pid; a lock whose pid no longer runs is stale
 * (the owner crashed) and is taken over.
 */
export interface DataDirLock {
  release(): void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPid(file: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

export function acquireDataDirLock(dataDir: string): DataDirLock {
  ensureDataDir(dataDir);
  const file = join(dataDir, 'serve.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
      return {
        release: () => {
          if (readPid(file) === process.pid) unlinkSync(file);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw dataDirError(error, dataDir, `write ${file}`);
      const pid = readPid(file);
      if (pid !== null && pid !== process.pid && isAlive(pid)) {
        throw errors.conflict(`another helpdesk serve (pid ${pid}) is already using data dir ${dataDir}`, { pid, data_dir: dataDir });
      }
      // Stale: its owner is gone. Remove it and try again ('wx' keeps the race between two
      // starters honest: only one of them creates the new file).
      try {
        unlinkSync(file);
      } catch (unlinkError) {
        if ((unlinkError as NodeJS.ErrnoException).code !== 'ENOENT') throw dataDirError(unlinkError, dataDir, `remove the stale lock ${file}`);
      }
    }
  }
  throw errors.conflict(`could not take the lock ${file}; another helpdesk serve is starting`);
}
