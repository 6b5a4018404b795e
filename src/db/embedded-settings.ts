import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { inDataDir } from '../core/data-dir.js';
import { AppError } from '../core/errors.js';

/**
 * `<data dir>/postgres.json`: how to reach the data dir's embedded server and where it lives.
 * A second command reads the port and credentials to connect to the server a running `serve`
 * started; later starts read where the cluster is (it lives outside the data dir under root).
 */
export interface EmbeddedSettings {
  port: number;
  user: string;
  password: string;
  /** The cluster directory: relative to the data dir (`pg`), or absolute when staged elsewhere. */
  cluster?: string;
  /** Under root: the staging dir holding the cluster and a copy of the programs (root-staging.ts). */
  staging?: string;
}

export const SETTINGS_FILE = 'postgres.json';

export function readSettings(dataDir: string): EmbeddedSettings | null {
  const file = join(dataDir, SETTINGS_FILE);
  if (!existsSync(file)) return null;
  const text = inDataDir(dataDir, `read ${file}`, () => readFileSync(file, 'utf8'));
  try {
    const settings = JSON.parse(text) as EmbeddedSettings;
    if (!Number.isInteger(settings.port) || typeof settings.user !== 'string' || typeof settings.password !== 'string') throw new Error('fields missing');
    return settings;
  } catch {
    throw new AppError(
      'not_ready',
      `The embedded PostgreSQL database cannot start: ${file} is damaged (it must hold the port, user and password of the data dir's server). ` +
        'Restore it from a backup of the data dir; without it the existing cluster cannot be logged into.',
      { database: 'embedded', reason: 'corrupt_settings', file },
    );
  }
}

export function writeSettings(dataDir: string, settings: EmbeddedSettings): void {
  const file = join(dataDir, SETTINGS_FILE);
  inDataDir(dataDir, `write ${file}`, () => writeFileSync(file, JSON.stringify(settings, null, 2) + '\n', { mode: 0o600 }));
}

export function newCredentials(): Pick<EmbeddedSettings, 'user' | 'password'> {
  return { user: 'helpdesk', password: randomBytes(18).toString('base64url') };
}

/** The cluster directory that settings name (default: `pg` in the data dir). */
export function clusterDirOf(dataDir: string, settings: EmbeddedSettings | null): string {
  return resolve(dataDir, settings?.cluster ?? 'pg');
}

/** How a cluster directory is recorded: relative when inside the data dir, so the data dir can move. */
export function recordedCluster(dataDir: string, clusterDir: string): string {
  const inside = relative(dataDir, clusterDir);
  return inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : clusterDir;
}
