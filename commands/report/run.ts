import { pipeline } from 'node:stream/promises';
import { Args, Flags } from '@oclif/core';
import { BaseCommand, remoteFlags } from '../../src/cli/base-command.js';
import { remoteClient, withLocalBackend } from '../../src/cli/backend.js';
import { showTable } from '../../src/cli/views/show-table.js';
import { errors } from '../../src/core/errors.js';
import { isUuid } from '../../src/core/ids.js';
import { requireFeature } from '../../src/licensing/features.js';
import { CHANNELS } from '../../src/tickets/models.js';
import { FORMATS, REPORT_KEYS, runJson } from '../../src/reports/catalog.js';
import { runCsv } from '../../src/reports/csv.js';
import { resolveFilters } from '../../src/reports/filters.js';

type RunOut = Awaited<ReturnType<typeof runJson>>;

export default class ReportRun extends BaseCommand {
  static override summary = 'Run a catalog report (GET /reports/run) for a window, as a table, JSON or CSV';
  static override description = [
    `Reports: ${REPORT_KEYS.join(', ')}; their dimensions and metrics are listed by GET /reports/catalog and docs/reports.md.`,
    '--format csv writes CSV (header row first) to stdout as it is read, for scheduled exports; --json prints the JSON answer.',
    'Locally it needs --tenant; with --api-url and --token it goes through the REST API and the tenant is the token\'s. Reports need the Enterprise edition either way.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> report run tickets_created --from 2026-11-01T00:00:00Z --to 2026-12-01T00:00:00Z --tenant acme',
    '<%= config.bin %> report run sla_outcomes --group-by target --tz Europe/Berlin --tenant acme --json',
    '<%= config.bin %> report run tickets_created --group-by ticket --format csv --tenant acme > tickets.csv',
  ];

  static override args = {
    key: Args.string({ description: 'Report key', required: true, options: [...REPORT_KEYS] }),
  };

  static override flags = {
    from: Flags.string({ description: 'Start of the window (inclusive), RFC 3339; default: 30 days before --to' }),
    to: Flags.string({ description: 'End of the window (exclusive), RFC 3339; default: now' }),
    'group-by': Flags.string({ description: "One of the report's dimensions; default: its first" }),
    team: Flags.string({ description: 'Only tickets of this team (id)' }),
    channel: Flags.string({ description: 'Only tickets of this channel', options: [...CHANNELS] }),
    tz: Flags.string({ description: 'IANA time zone of local days and hours; default: the business-hours zone' }),
    format: Flags.string({ description: 'table (default on a terminal), csv', options: [...FORMATS, 'table'], default: 'table' }),
    tenant: Flags.string({ description: 'Tenant slug (local mode)' }),
    ...remoteFlags,
  };

  async run(): Promise<RunOut | void> {
    const { args, flags } = await this.parse(ReportRun);
    if (flags.team !== undefined && !isUuid(flags.team)) throw errors.invalid('team', 'must be a team id (UUID)');
    const filters = { from: flags.from, to: flags.to, team_id: flags.team, channel: flags.channel, tz: flags.tz };
    const input = { report: args.key, group_by: flags['group-by'] };
    const csv = flags.format === 'csv' && !this.jsonEnabled();
    const client = remoteClient(flags);
    let result: RunOut | undefined;
    if (client) {
      const query = new URLSearchParams(Object.entries({ ...filters, ...input, format: csv ? 'csv' : 'json' })
        .filter((e): e is [string, string] => e[1] !== undefined));
      if (csv) return void (await pipeline(await client.download(`/reports/run?${query}`), process.stdout, { end: false }));
      result = await client.request<RunOut>('GET', `/reports/run?${query}`);
    } else {
      if (!flags.tenant) throw errors.invalid('tenant', 'is required without --api-url');
      const slug = flags.tenant;
      result = await withLocalBackend(async ({ tenant, inTenant }) => inTenant((await tenant(slug)).id, async (ctx) => {
        await requireFeature(ctx, 'reporting');
        const f = await resolveFilters(ctx, filters);
        if (!csv) return runJson(ctx, f, input);
        await pipeline((await runCsv(ctx, f, input)).body, process.stdout, { end: false });
        return undefined;
      }));
    }
    if (!result) return;
    await showTable({
      columns: result.columns.map((header, i) => ({ header: header.toUpperCase(), value: (row: RunOut['rows'][number]) => String(row[i] ?? '-') })),
      rows: result.rows,
      plain: (row) => row.map((c) => c ?? '').join('\t'),
    }, this);
    if (result.truncated) this.log('(more rows than a table shows: use --format csv)');
    return result;
  }
}
