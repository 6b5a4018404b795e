import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import S3rver from 's3rver';

/**
 * A real S3-compatible server (s3rver) on loopback, for the archiver's object store: path-style
 * requests, SigV4-signed with the credentials below, its objects in a temporary directory.
 */
export const S3_ACCESS_KEY_ID = 'S3RVER';
export const S3_SECRET_ACCESS_KEY = 'S3RVER';

export async function s3Server(t: Test, bucket: string): Promise<{ endpoint: string }> {
  const directory = mkdtempSync(join(tmpdir(), 'helpdesk-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  t.teardown(async () => {
    await server.close();
    rmSync(directory, { recursive: true, force: true });
  });
  return { endpoint: `http://127.0.0.1:${port}` };
}
