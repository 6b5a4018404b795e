import { Type } from '@sinclair/typebox';
import { cursorParams, ListOf } from '../core/pagination.js';
import { Nullable, StringEnum, Timestamp } from '../core/schema-types.js';
import { CHANNELS } from '../tickets/models.js';
import { FORMATS, REPORT_KEYS } from './catalog.js';
import { INTERVALS } from './volume.js';

/** The query parameters of every report (CONTRACT §18). */
const filterParams = {
  from: Type.Optional(Timestamp({ description: 'Start of the window (inclusive), RFC 3339; default: 30 days before `to`' })),
  to: Type.Optional(Timestamp({ description: 'End of the window (exclusive), RFC 3339; default: now' })),
  team_id: Type.Optional(Type.String({ format: 'uuid', description: 'Only tickets of this team' })),
  channel: Type.Optional(StringEnum(CHANNELS, { description: 'Only tickets of this channel' })),
  tz: Type.Optional(Type.String({ maxLength: 64, pattern: '^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*$', description: 'IANA time zone of the local days and hours; default: the business-hours time zone' })),
};

export const ReportQuery = Type.Object(filterParams);
export const VolumeQuery = Type.Object({ ...filterParams, interval: Type.Optional(StringEnum(INTERVALS, { default: 'day' })) });
export const ReportListQuery = Type.Object({ ...filterParams, ...cursorParams });
export const RunQuery = Type.Object({
  ...filterParams,
  report: StringEnum(REPORT_KEYS, { description: 'A key of GET /reports/catalog' }),
  group_by: Type.Optional(Type.String({ maxLength: 32, description: 'One of the report\'s dimensions; default: its first' })),
  format: Type.Optional(StringEnum(FORMATS, { default: 'json', description: 'json, or csv (streamed, as an attachment)' })),
});

const Seconds = Nullable(Type.Number({ description: 'Calendar seconds; null when no ticket has one' }));
const Rate = Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'Fraction 0..1; null when nothing to divide' }));

const metricFields = {
  total_tickets_created: Type.Integer(),
  total_tickets_resolved: Type.Integer(),
  avg_first_response_time_seconds: Seconds,
  avg_resolution_time_seconds: Seconds,
  sla_compliance_rate: Rate,
  csat_average_score: Nullable(Type.Number()),
  csat_response_rate: Rate,
};

export const Overview = Type.Object({ ...metricFields, from: Type.String(), to: Type.String() }, { $id: 'ReportOverview' });

export const Volume = Type.Object({
  from: Type.String(), to: Type.String(), interval: StringEnum(INTERVALS), tz: Type.String(),
  series: Type.Array(Type.Object({ bucket_start: Type.String(), created: Type.Integer(), resolved: Type.Integer() })),
}, { $id: 'ReportVolume' });

export const AgentRow = Type.Object({
  agent_id: Type.String({ format: 'uuid' }),
  agent_name: Type.String(),
  assigned: Type.Integer(),
  resolved: Type.Integer(),
  public_replies: Type.Integer(),
  avg_first_response_time_seconds: Seconds,
  avg_resolution_time_seconds: Seconds,
  csat_average_score: Nullable(Type.Number()),
}, { $id: 'ReportAgentRow' });

export const AgentsReport = Type.Object({ data: Type.Array(AgentRow) }, { $id: 'ReportAgents' });

const SlaBreach = Type.Object({
  ticket_id: Type.String({ format: 'uuid' }),
  ticket_number: Type.Integer(),
  target: StringEnum(['first_response', 'next_response', 'resolution'] as const),
  due_at: Nullable(Type.String()),
  breached_at: Type.String(),
  priority_id: Type.String({ format: 'uuid' }),
  team_id: Nullable(Type.String({ format: 'uuid' })),
}, { $id: 'ReportSlaBreach' });
export const SlaBreachList = ListOf(SlaBreach, { cursor: true });

const CsatRating = Type.Object({
  id: Type.String({ format: 'uuid' }),
  ticket_id: Type.String({ format: 'uuid' }),
  ticket_number: Type.Integer(),
  score: Type.Integer({ minimum: 1, maximum: 5 }),
  comment: Nullable(Type.String()),
  reason: Nullable(Type.String()),
  agent_id: Nullable(Type.String({ format: 'uuid' })),
  submitted_at: Type.String(),
}, { $id: 'ReportCsatRating' });
const csatList = ListOf(CsatRating, { cursor: true });
export const CsatRatingList = Type.Object({
  ...csatList.properties,
  summary: Type.Object({
    count: Type.Integer(),
    average: Nullable(Type.Number()),
    distribution: Type.Object({ 1: Type.Integer(), 2: Type.Integer(), 3: Type.Integer(), 4: Type.Integer(), 5: Type.Integer() }),
  }),
}, { $id: 'ReportCsatRatingList' });

export const Catalog = Type.Object({
  data: Type.Array(Type.Object({
    key: Type.String(), name: Type.String(), description: Type.String(),
    dimensions: Type.Array(Type.Object({ key: Type.String(), description: Type.String() })),
    metrics: Type.Array(Type.Object({ key: Type.String(), description: Type.String() })),
  })),
}, { $id: 'ReportCatalog' });

const CellSchema = Type.Unsafe<string | number | null>({ type: ['string', 'number', 'null'] });
export const RunResult = Type.Object({
  report: Type.String(), group_by: Type.String(), from: Type.String(), to: Type.String(), tz: Type.String(),
  columns: Type.Array(Type.String()),
  rows: Type.Array(Type.Array(CellSchema)),
  truncated: Type.Boolean({ description: 'More rows than a JSON answer carries (10,000): take format=csv' }),
}, { $id: 'ReportRun' });

const Compared = Type.Object({
  value: Nullable(Type.Number()), previous: Nullable(Type.Number()),
  change: Nullable(Type.Number({ description: 'value − previous' })),
  change_ratio: Nullable(Type.Number({ description: '(value − previous) ÷ previous' })),
});
export const AnalyticsOverview = Type.Object({
  from: Type.String(), to: Type.String(), previous_from: Type.String(), previous_to: Type.String(),
  ...Object.fromEntries(Object.keys(metricFields).map((k) => [k, Compared])),
  reopen_rate: Compared,
  one_touch_resolution_rate: Compared,
}, { $id: 'AnalyticsOverview' });

export const Heatmap = Type.Object({
  from: Type.String(), to: Type.String(), tz: Type.String(),
  cells: Type.Array(Type.Object({ weekday: Type.Integer({ minimum: 0, maximum: 6 }), hour: Type.Integer({ minimum: 0, maximum: 23 }), created: Type.Integer() })),
}, { $id: 'AnalyticsHeatmap' });
