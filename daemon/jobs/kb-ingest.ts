// Bree worker for the `kb-ingest` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('kb-ingest');
