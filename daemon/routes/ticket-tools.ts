import { STAFF, route } from '../route.js';
import { IdParams } from '../../src/core/schema-types.js';
import { bulkUpdate } from '../../src/automation/bulk.js';
import { BulkAnswer, BulkUpdate } from '../../src/automation/bulk-schemas.js';
import { FilterValuesQuery, TicketFilterValues, ticketFilterValues } from '../../src/automation/filter-values.js';
import {
  SentimentSchema, SubjectSuggestionSchema, TextAnalysisInput, analyzeTicketSentiment, suggestTicketSubject,
} from '../../src/automation/text-analysis.js';

/** Agent tools over tickets: bulk update, query-builder values, subject suggestion, sentiment. */
const tags = ['tickets'];

export const ticketToolsRoutes = [
  route({
    method: 'POST', url: '/tickets/bulk', access: { kind: 'token', scope: 'tickets:write', roles: STAFF },
    summary: 'Change up to 100 tickets at once; per-ticket results', tags, operationId: 'tickets.bulkUpdate',
    schema: { body: BulkUpdate, response: { 200: BulkAnswer } },
    example: { body: { ticket_ids: ['0190a0e0-0000-7000-8000-000000000000'], add_tags: ['reviewed'] } },
    handler: (ctx, { body }) => bulkUpdate(ctx, body),
  }),
  route({
    method: 'GET', url: '/tickets/filter-values', access: { kind: 'token', scope: 'tickets:read', roles: STAFF },
    summary: 'Values a condition on a field takes, for the query builder', tags,
    schema: { querystring: FilterValuesQuery, response: { 200: TicketFilterValues } },
    example: { query: { field: 'priority' } },
    handler: (ctx, { query }) => ticketFilterValues(ctx, query),
  }),
  route({
    method: 'POST', url: '/tickets/:id/subject/suggest', access: { kind: 'token', scope: 'tickets:write', roles: STAFF },
    summary: 'Suggest a subject from the first message (extractive, computed locally)', tags, transaction: false,
    schema: { params: IdParams, body: TextAnalysisInput, response: { 200: SubjectSuggestionSchema } },
    example: { body: {} },
    handler: (ctx, { params, body }) => suggestTicketSubject(ctx, params.id, body),
  }),
  route({
    method: 'POST', url: '/tickets/:id/sentiment/analyze', access: { kind: 'token', scope: 'tickets:write', roles: STAFF },
    summary: "Sentiment and urgency of the customer's latest message (lexicon, computed locally)", tags, transaction: false,
    schema: { params: IdParams, body: TextAnalysisInput, response: { 200: SentimentSchema } },
    example: { body: {} },
    handler: (ctx, { params, body }) => analyzeTicketSentiment(ctx, params.id, body),
  }),
];
