import { BaseCommand } from '../../src/cli/base-command.js';
import { showTable } from '../../src/cli/views/show-table.js';
import { JOBS } from '../../src/jobs/registry.js';

export interface JobInfo {
  name: string;
  description: string;
  schedule: string;
}

export default class JobsList extends BaseCommand {
  static override summary = 'List the background jobs and their schedules';
  static override examples = ['<%= config.bin %> jobs list --json'];

  async run(): Promise<JobInfo[]> {
    await this.parse(JobsList);
    const jobs = JOBS.map(({ name, description, schedule }) => ({ name, description, schedule }));
    await showTable(
      {
        columns: [
          { header: 'NAME', value: (job) => job.name },
          { header: 'EVERY', value: (job) => job.schedule },
          { header: 'DESCRIPTION', value: (job) => job.description },
        ],
        rows: jobs,
        plain: (job) => `${job.name.padEnd(22)} every ${job.schedule.padEnd(6)} ${job.description}`,
      },
      this,
    );
    return jobs;
  }
}
