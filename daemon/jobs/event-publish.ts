// Bree worker for the `event-publish` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('event-publish');
