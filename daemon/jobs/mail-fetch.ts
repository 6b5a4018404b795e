// Bree worker for the `mail-fetch` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('mail-fetch');
