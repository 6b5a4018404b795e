// Bree worker for the `ticket-archive` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('ticket-archive');
