// Bree worker for the `sla-escalation` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('sla-escalation');
