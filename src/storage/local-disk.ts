import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from './blob-store.js';

/**
 * The blob store of a single machine: files under `<root>/<key>`. A put writes `<key>.partial`
 * and renames it when the stream ended, so a reader never sees half a file and a failed upload
 * leaves only a partial file that the same put removes.
 */
export function localDiskStore(root: string): BlobStore {
  const base = resolve(root);
  const pathOf = (key: string) => {
    const path = resolve(base, key);
    // Keys come from our own ids; this refuses anything that would leave the root all the same.
    if (!path.startsWith(base + sep)) throw new Error(`Storage key ${key} leaves the store`);
    return path;
  };

  return {
    async put(key, content) {
      const path = pathOf(key);
      const partial = `${path}.partial`;
      await mkdir(dirname(path), { recursive: true });
      try {
        await pipeline(content, createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
        await rename(partial, path);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
    },
    async get(key, range) {
      // Opened here, not lazily by the stream: a missing file fails before any header is sent.
      const handle = await open(pathOf(key), 'r');
      return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    },
    async stat(key) {
      try {
        return { size: (await stat(pathOf(key))).size };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
  };
}

/** The attachments' directory under the data dir. */
export function attachmentsRoot(dataDir: string): string {
  return join(dataDir, 'attachments');
}
