// Bree worker for the `routing-time-trigger` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('routing-time-trigger');
