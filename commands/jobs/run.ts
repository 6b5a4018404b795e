import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { withLocalBackend } from '../../src/cli/backend.js';
import { parseRfc3339 } from '../../src/core/clock.js';
import { errors } from '../../src/core/errors.js';
import { requireJob, runJob, type JobRunOut } from '../../src/jobs/runner.js';

export default class JobsRun extends BaseCommand {
  static override summary = 'Run one background job once, now or at a simulated time';
  static override description = 'Runs in this process (no scheduler), under the same lock as scheduled runs: if the job is already running elsewhere, this run is recorded as skipped.';
  static override examples = ['<%= config.bin %> jobs run session-cleanup', '<%= config.bin %> jobs run session-cleanup --now 2030-01-01T00:00:00Z --json'];

  static override args = {
    name: Args.string({ description: 'Job name (see `helpdesk jobs list`)', required: true }),
  };

  static override flags = {
    now: Flags.string({ description: 'Simulated time, RFC 3339 (e.g. 2030-01-01T00:00:00Z)' }),
  };

  async run(): Promise<JobRunOut> {
    const { args, flags } = await this.parse(JobsRun);
    const now = flags.now === undefined ? null : parseRfc3339(flags.now);
    if (flags.now !== undefined && !now) throw errors.invalid('now', 'must be an RFC 3339 timestamp, e.g. 2030-01-01T00:00:00Z');
    requireJob(args.name); // before opening the database: an unknown name needs none
    const run = await withLocalBackend(({ deps }) => runJob(deps, args.name, { now }));
    this.log(`Job ${run.name}: ${run.status}${run.simulated_now ? ` (at simulated time ${run.simulated_now})` : ''}`);
    if (run.result) for (const [key, value] of Object.entries(run.result)) this.log(`  ${key}: ${JSON.stringify(value)}`);
    return run;
  }
}
