#!/usr/bin/env node
// The `helpdesk` executable: runs the compiled commands in dist/ (built by `npm run build`,
// which `npm ci` runs through the `prepare` script).
import { execute } from '@oclif/core';

await execute({ dir: import.meta.url });
