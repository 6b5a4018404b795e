import { route, STAFF } from '../route.js';
import { BinaryReply } from '../binary.js';
import { create as contentDisposition } from 'content-disposition';
import { resolveFilters } from '../../src/reports/filters.js';
import { overview } from '../../src/reports/overview.js';
import { heatmap, volume } from '../../src/reports/volume.js';
import { agentsReport, myReport } from '../../src/reports/agents.js';
import { csatRatings, slaBreaches } from '../../src/reports/lists.js';
import { catalog, runJson } from '../../src/reports/catalog.js';
import { runCsv } from '../../src/reports/csv.js';
import { analyticsOverview } from '../../src/reports/analytics.js';
import {
  AgentRow, AgentsReport, AnalyticsOverview, Catalog, CsatRatingList, Heatmap, Overview, ReportListQuery, ReportQuery, RunQuery,
  RunResult, SlaBreachList, Volume, VolumeQuery,
} from '../../src/reports/schemas.js';

/** Reports (Enterprise) and BI analytics (module `bi`), CONTRACT §18; definitions in docs/reports.md. */
const tags = ['reports'];
const reporting = { kind: 'token', scope: 'reporting:read' } as const;

export const reportsRoutes = [
  route({
    method: 'GET', url: '/reports/overview', access: reporting, feature: 'reporting', summary: 'Overview metrics of a window', tags,
    schema: { querystring: ReportQuery, response: { 200: Overview } },
    handler: async (ctx, { query }) => overview(ctx, await resolveFilters(ctx, query)),
  }),
  route({
    method: 'GET', url: '/reports/volume', access: reporting, feature: 'reporting', summary: 'Tickets created and resolved per local day, week or month', tags,
    schema: { querystring: VolumeQuery, response: { 200: Volume } },
    handler: async (ctx, { query }) => volume(ctx, await resolveFilters(ctx, query), query.interval ?? 'day'),
  }),
  route({
    method: 'GET', url: '/reports/agents', access: reporting, feature: 'reporting', summary: 'Figures per staff user', tags,
    schema: { querystring: ReportQuery, response: { 200: AgentsReport } },
    handler: async (ctx, { query }) => agentsReport(ctx, await resolveFilters(ctx, query)),
  }),
  route({
    method: 'GET', url: '/reports/me', access: { kind: 'token', roles: STAFF }, summary: 'The caller\'s own figures (every edition)', tags,
    schema: { querystring: ReportQuery, response: { 200: AgentRow } },
    handler: async (ctx, { query }) => myReport(ctx, await resolveFilters(ctx, query)),
  }),
  route({
    method: 'GET', url: '/reports/sla-breaches', access: reporting, feature: 'reporting', summary: 'SLA breaches of the window, newest first', tags,
    schema: { querystring: ReportListQuery, response: { 200: SlaBreachList } },
    handler: async (ctx, { query }) => slaBreaches(ctx, await resolveFilters(ctx, query), query),
  }),
  route({
    method: 'GET', url: '/reports/csat-ratings', access: reporting, feature: 'reporting', summary: 'CSAT ratings of the window, newest first, with their summary', tags,
    schema: { querystring: ReportListQuery, response: { 200: CsatRatingList } },
    handler: async (ctx, { query }) => csatRatings(ctx, await resolveFilters(ctx, query), query),
  }),
  route({
    method: 'GET', url: '/reports/catalog', access: reporting, feature: 'reporting', summary: 'The reports `run` answers, with their dimensions and metrics', tags,
    schema: { response: { 200: Catalog } },
    handler: async () => catalog(),
  }),
  route({
    method: 'GET', url: '/reports/run', access: reporting, feature: 'reporting', summary: 'Run a catalog report grouped by one dimension, as JSON or CSV', tags,
    description: 'format=csv answers text/csv as an attachment, streamed (header row first); JSON carries at most 10,000 rows.',
    csv: 'The rows as CSV (header row first), as an attachment',
    schema: { querystring: RunQuery, response: { 200: RunResult } },
    example: { query: { report: 'tickets_created', group_by: 'day' } },
    handler: async (ctx, { query }) => {
      const filters = await resolveFilters(ctx, query);
      if (query.format !== 'csv') return runJson(ctx, filters, query);
      const csv = await runCsv(ctx, filters, query);
      return new BinaryReply(200, {
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Disposition': contentDisposition(csv.filename, { type: 'attachment' }),
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'no-store',
      }, csv.body);
    },
  }),
  route({
    method: 'GET', url: '/analytics/overview', access: reporting, feature: 'bi', summary: 'Overview metrics with the previous period, reopen and one-touch resolution rates', tags: ['analytics'],
    schema: { querystring: ReportQuery, response: { 200: AnalyticsOverview } },
    handler: async (ctx, { query }) => analyticsOverview(ctx, await resolveFilters(ctx, query)),
  }),
  route({
    method: 'GET', url: '/analytics/heatmap', access: reporting, feature: 'bi', summary: 'Tickets created per local weekday (0 = Monday) and hour', tags: ['analytics'],
    schema: { querystring: ReportQuery, response: { 200: Heatmap } },
    handler: async (ctx, { query }) => heatmap(ctx, await resolveFilters(ctx, query)),
  }),
];
