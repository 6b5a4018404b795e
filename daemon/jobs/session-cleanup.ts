// Bree worker for the `session-cleanup` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('session-cleanup');
