// Bree worker for the `legacy-import` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('legacy-import');
