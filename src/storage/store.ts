import type { Config } from '../core/config.js';
import type { BlobStore } from './blob-store.js';
import { attachmentsRoot, localDiskStore } from './local-disk.js';

/**
 * The blob store a process uses, chosen from its configuration: the data dir's local disk for now
 * (an S3-compatible store would be picked here from its own setting). One instance per root.
 */
const stores = new Map<string, BlobStore>();

export function blobStoreFor(config: Pick<Config, 'dataDir'>): BlobStore {
  const root = attachmentsRoot(config.dataDir);
  let store = stores.get(root);
  if (!store) {
    store = localDiskStore(root);
    stores.set(root, store);
  }
  return store;
}
