// Bree worker for the `webhook-dispatch` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('webhook-dispatch');
