// Bree worker for the `channel-delivery` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('channel-delivery');
