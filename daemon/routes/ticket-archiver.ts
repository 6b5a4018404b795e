import { ADMIN, route } from '../route.js';
import { archiverStatus, startArchiveRun } from '../../src/archiver/runs.js';
import { ArchiveRun, ArchiveRunStarted, ArchiverStatus } from '../../src/archiver/schemas.js';

/** The ticket archiver (SPEC "Administration", CONTRACT §19): archiver module, admins only. */
const tags = ['ticket-archiver'];
const access = { kind: 'token', roles: ADMIN } as const;

export const ticketArchiverRoutes = [
  route({
    method: 'POST', url: '/ticket-archiver/run', access, feature: 'archiver', summary: 'Queue an archive run (closed tickets older than N days to Parquet in the object store)', tags,
    description: 'Answers at once with the run id; the `ticket-archive` job does the work. Each batch is written, read back and verified before its hot rows are removed, so a run that dies resumes where it stopped. `dry_run` only counts. One run at a time per tenant (409 while one is queued or running).',
    errors: ['conflict'],
    schema: { body: ArchiveRun, response: { 202: ArchiveRunStarted } }, status: 202,
    example: { body: { older_than_days: 365, dry_run: true } },
    handler: (ctx, { body }) => startArchiveRun(ctx, body ?? {}),
  }),
  route({
    method: 'GET', url: '/ticket-archiver/status', access, feature: 'archiver', summary: 'Archived tickets and the last run', tags,
    schema: { response: { 200: ArchiverStatus } },
    handler: (ctx) => archiverStatus(ctx),
  }),
];
