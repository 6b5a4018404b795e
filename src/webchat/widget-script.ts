import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The embeddable widget (`webchat/widget.js` at the project root, dependency-free), read once and
 * served by the daemon at `{site_url}/webchat/widget.js`. Found by walking up from this module, so
 * it is the same file whether the daemon runs from the sources or from the build.
 */
let cached: string | null = null;

export function widgetScript(): string {
  if (cached !== null) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'webchat', 'widget.js');
    if (existsSync(candidate)) return (cached = readFileSync(candidate, 'utf8'));
    dir = dirname(dir);
  }
  throw new Error('webchat/widget.js is missing from the installation');
}
