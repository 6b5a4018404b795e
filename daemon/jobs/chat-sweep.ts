// Bree worker for the `chat-sweep` job (see src/jobs/registry.ts).
import { runInWorker } from '../../src/jobs/worker.js';

await runInWorker('chat-sweep');
