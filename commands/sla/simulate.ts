import { readFileSync } from 'node:fs';
import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { withLocalBackend } from '../../src/cli/backend.js';
import { showTable } from '../../src/cli/views/show-table.js';
import { errors } from '../../src/core/errors.js';
import { simulate, type SimulationOut } from '../../src/sla/simulate.js';

export default class SlaSimulate extends BaseCommand {
  static override summary = "Replay a ticket scenario through the tenant's SLA policies, business hours and holidays";
  static override description = [
    'The same engine as live tickets (CONTRACT §11). --events is a JSON array of {"at": TS, "kind": "agent_reply" | "customer_reply" | "status" | "priority" | "type", "value"?: key}.',
    'The targets are shown as at the end of the scenario (its last event, or --until if later), then the timeline of every start, pause, resume, warning, breach and met.',
    '--business-hours FILE (either PUT /business-hours body) and --holidays FILE ([{"date": "YYYY-MM-DD", "recurring"?: bool}]) try a configuration before applying it.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> sla simulate --tenant acme --priority high --created 2026-11-27T16:00:00Z',
    '<%= config.bin %> sla simulate --tenant acme --priority normal --created 2026-11-23T09:00:00Z --events scenario.json --json',
    '<%= config.bin %> sla simulate --tenant acme --priority low --created 2026-12-23T15:00:00Z --business-hours hours.json --holidays holidays.json',
  ];

  static override flags = {
    tenant: Flags.string({ description: 'Tenant slug', required: true }),
    priority: Flags.string({ description: 'Priority key (urgent, high, normal, low, …)', required: true }),
    type: Flags.string({ description: 'Ticket type, by name or id (its SLA override applies)' }),
    created: Flags.string({ description: 'When the ticket is created, RFC 3339', required: true }),
    events: Flags.string({ description: 'JSON file: the scenario events' }),
    until: Flags.string({ description: 'Run the clock on to this instant (RFC 3339) after the last event' }),
    'business-hours': Flags.string({ description: "JSON file: business hours to use instead of the tenant's" }),
    holidays: Flags.string({ description: "JSON file: holidays to use instead of the tenant's" }),
  };

  async run(): Promise<SimulationOut> {
    const { flags } = await this.parse(SlaSimulate);
    const input = {
      priority: flags.priority, type: flags.type ?? null, created: flags.created, until: flags.until ?? null,
      events: flags.events !== undefined ? readJson('events', flags.events) : undefined,
      businessHours: flags['business-hours'] !== undefined ? readJson('business-hours', flags['business-hours']) : undefined,
      holidays: flags.holidays !== undefined ? readJson('holidays', flags.holidays) : undefined,
    };
    const out = await withLocalBackend(async ({ tenant, inTenant }) => inTenant((await tenant(flags.tenant)).id, (ctx) => simulate(ctx, input)));

    const targets = Object.entries(out.targets).map(([name, t]) => ({ name, ...t }));
    await showTable({
      columns: [
        { header: 'TARGET', value: (r) => r.name },
        { header: 'STATUS', value: (r) => r.status },
        { header: 'DUE', value: (r) => r.due_at ?? '-' },
        { header: 'WARN', value: (r) => r.warn_at ?? '-' },
        { header: 'MET', value: (r) => r.met_at ?? '-' },
        { header: 'BREACHED', value: (r) => r.breached_at ?? '-' },
      ],
      rows: targets,
      plain: (r) => `${r.name.padEnd(15)} ${r.status.padEnd(9)} due=${r.due_at ?? '-'} warn=${r.warn_at ?? '-'} met=${r.met_at ?? '-'} breached=${r.breached_at ?? '-'}`,
    }, this);
    this.log('');
    await showTable({
      columns: [
        { header: 'AT', value: (e) => e.at },
        { header: 'TARGET', value: (e) => e.target },
        { header: 'EVENT', value: (e) => e.kind },
        { header: 'DEADLINE', value: (e) => e.due_at ?? '' },
      ],
      rows: out.timeline,
      plain: (e) => `${e.at} ${e.target.padEnd(15)} ${e.kind.padEnd(8)} ${e.due_at ?? ''}`.trimEnd(),
    }, this);
    return out;
  }
}

function readJson(flag: string, file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw errors.invalid(flag, `cannot be read: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw errors.invalid(flag, `is not JSON: ${(error as Error).message}`);
  }
}
