// Bree worker for the `push-send` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('push-send');
