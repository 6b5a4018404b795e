// Bree worker for the `channel-inbound` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('channel-inbound');
