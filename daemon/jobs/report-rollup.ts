// Bree worker for the `report-rollup` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('report-rollup');
