// Worker threads do not inherit the tsx loader on Node 20, so when the daemon runs from its
// TypeScript sources (bin/dev.js, tests) Bree starts each job through this shim, which registers
// tsx in the worker and then imports the .ts job named in workerData.script.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.script);
