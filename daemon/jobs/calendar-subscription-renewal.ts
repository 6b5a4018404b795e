// Bree worker for the `calendar-subscription-renewal` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('calendar-subscription-renewal');
