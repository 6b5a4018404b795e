import { accessSync, constants, mkdirSync } from 'node:fs';
import { AppError } from './errors.js';

/**
 * The data dir (HELPDESK_DATA_DIR) holds what a single-machine install keeps locally: the embedded
 * database's settings, the generated secret key, the serve lock. When it cannot be written (a
 * read-only file system, a file in the way, no permission), that is the operator's to fix, so the
 * failure becomes one readable message naming the directory and the way out instead of a stack
 * trace. `not_ready`: the local environment cannot serve yet (exit code 6).
 */
const REASONS: Record<string, string> = {
  EROFS: 'it is on a read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a file stands where a directory is needed',
  EEXIST: 'a file stands where a directory is needed',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  ELOOP: 'too many symbolic links',
};

export function dataDirError(error: unknown, dataDir: string, doing: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (!code || !(code in REASONS)) return error;
  return new AppError(
    'not_ready',
    `Cannot ${doing}: ${REASONS[code]} (${code}). Helpdesk keeps its local state in the data dir (the embedded ` +
      'database settings, the secret key, the serve lock): set HELPDESK_DATA_DIR to a directory you can write to ' +
      '(the default is .helpdesk in the current directory).',
    { reason: 'data_dir_unwritable', data_dir: dataDir, errno: code },
  );
}

/** Runs a file operation on the data dir, turning its failure into the readable error above; `doing` names it ("write /d/x"). */
export function inDataDir<T>(dataDir: string, doing: string, operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    throw dataDirError(error, dataDir, doing);
  }
}

/** Creates the data dir (and its parents) when missing, and checks that it can be written. */
export function ensureDataDir(dataDir: string): void {
  inDataDir(dataDir, `create the data dir ${dataDir}`, () => mkdirSync(dataDir, { recursive: true }));
  inDataDir(dataDir, `write to the data dir ${dataDir}`, () => accessSync(dataDir, constants.W_OK));
}
