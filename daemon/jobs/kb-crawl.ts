// Bree worker for the `kb-crawl` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('kb-crawl');
