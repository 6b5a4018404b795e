import { Readable } from 'node:stream';
import { route } from '../route.js';
import { BinaryReply } from '../binary.js';
import { ListOf } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { cancelMeeting, createMeeting, deleteMeeting, getMeeting, listMeetings, updateMeeting } from '../../src/meetings/service.js';
import { availability } from '../../src/meetings/availability.js';
import { feedByToken, regenerateFeedToken } from '../../src/meetings/feed.js';
import { authorizeUrl, connectAccount, deleteConnector, disconnectAccount, listConnectors, myAccounts, putConnector } from '../../src/meetings/connectors.js';
import { calendarAWebhook, calendarBWebhook } from '../../src/meetings/calendar-webhooks.js';
import {
  AuthorizeAnswer, CalendarWebhookBody, CalendarWebhookQuery, ConnectBody, ConnectedAccount, ConnectedAccountList, ConnectorList, ConnectorOut,
  ConnectorPut, ProviderParams,
} from '../../src/meetings/connector-schemas.js';
import { ADMIN } from '../route.js';
import type { ConnectorProvider } from '../../src/meetings/vendor.js';
import {
  Availability, AvailabilityQuery, FeedParams, FeedToken, MeetingCancel, MeetingCreate, MeetingListQuery, MeetingPatch, MeetingOut,
} from '../../src/meetings/schemas.js';

/** Meetings and calendars (SPEC "Meetings", CONTRACT §7). Licensed module `meetings`. */
const tags = ['meetings'];
const read = { kind: 'token', scope: 'meetings:read' } as const;
const write = { kind: 'token', scope: 'meetings:write' } as const;
const feature = 'meetings' as const;

const example = {
  title: 'Walk through the export problem', description: 'Screen share of the failing export',
  start_at: '2026-12-01T09:00:00Z', end_at: '2026-12-01T09:30:00Z', video_provider: 'manual',
  join_url: 'https://meet.example.com/abc-defg', attendees: [{ email: 'guest@customer.example', name: 'Guest' }],
  recurrence_rule: 'FREQ=WEEKLY;BYDAY=TU;COUNT=4',
};

function textReply(text: string): BinaryReply {
  return new BinaryReply(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }, Readable.from([Buffer.from(text, 'utf8')]));
}

async function icsReply(body: string): Promise<BinaryReply> {
  return new BinaryReply(200, {
    'Content-Type': 'text/calendar; charset=utf-8',
    'Content-Disposition': 'inline; filename="meetings.ics"',
    'Cache-Control': 'private, max-age=300',
    'X-Content-Type-Options': 'nosniff',
  }, Readable.from([Buffer.from(body, 'utf8')]));
}

export const meetingsRoutes = [
  route({
    method: 'GET', url: '/meetings', access: read, feature, summary: 'List meetings (by start; filter by ticket or status)', tags,
    schema: { querystring: MeetingListQuery, response: { 200: ListOf(MeetingOut) } },
    handler: (ctx, { query }) => listMeetings(ctx, query),
  }),
  route({
    method: 'POST', url: '/meetings', access: write, feature, summary: 'Schedule a meeting (invitations go out to every attendee)', tags,
    description: 'Accepts start_at/starts_at, end_at/ends_at, video_provider/provider and attendees as {user_id} or {email, name?}.',
    errors: ['forbidden', 'conflict'],
    schema: { body: MeetingCreate, response: { 201: MeetingOut } }, status: 201,
    example: { body: example },
    handler: (ctx, { body }) => createMeeting(ctx, body),
  }),
  route({
    method: 'GET', url: '/meetings/availability', access: read, feature, summary: 'Busy ranges of users in a window (advisory conflicts)', tags,
    schema: { querystring: AvailabilityQuery, response: { 200: Availability } },
    example: { query: { from: '2026-12-01T00:00:00Z', to: '2026-12-08T00:00:00Z', attendee_ids: '0190f3a0-0000-7000-8000-000000000000' } },
    handler: (ctx, { query }) => availability(ctx, query),
  }),
  route({
    method: 'POST', url: '/meetings/feed-token/regenerate', access: { kind: 'token' }, authenticatedOnly: true, feature,
    summary: 'A new personal calendar feed address (the old one stops working at once)', tags,
    errors: ['forbidden'],
    schema: { response: { 200: FeedToken } },
    handler: (ctx) => regenerateFeedToken(ctx),
  }),
  route({
    method: 'GET', url: '/meetings/feed/:token', root: true, access: { kind: 'public' }, operationId: 'meetings.feed.get',
    summary: 'Personal iCalendar feed (text/calendar); the token is the credential; `.ics` suffix optional', tags,
    description: 'Active meetings from 180 days ago to 180 days ahead; a series is one VEVENT with its RRULE.',
    errors: ['feature_not_licensed'],
    binary: { description: 'The iCalendar feed (text/calendar)', ranges: false },
    schema: { params: FeedParams },
    handler: async (ctx, { params }) => icsReply(await feedByToken(ctx.deps, params.token, ctx.now)),
  }),
  route({
    method: 'GET', url: '/meetings/:id', access: read, feature, summary: 'A meeting with its attendees and their answers', tags,
    schema: { params: IdParams, response: { 200: MeetingOut } },
    handler: (ctx, { params }) => getMeeting(ctx, params.id),
  }),
  route({
    method: 'PUT', url: '/meetings/:id', access: write, feature, summary: 'Replace a meeting: every field is assigned (absent or null clears it)', tags,
    errors: ['meeting_cancelled', 'conflict'],
    schema: { params: IdParams, body: MeetingCreate, response: { 200: MeetingOut } },
    example: { body: example },
    handler: (ctx, { params, body }) => updateMeeting(ctx, params.id, body, 'put'),
  }),
  route({
    method: 'PATCH', url: '/meetings/:id', access: write, feature, summary: 'Change the fields sent (others keep their values)', tags,
    errors: ['meeting_cancelled', 'conflict'],
    schema: { params: IdParams, body: MeetingPatch, response: { 200: MeetingOut } },
    example: { body: { start_at: '2026-12-01T10:00:00Z', end_at: '2026-12-01T10:30:00Z' } },
    handler: (ctx, { params, body }) => updateMeeting(ctx, params.id, body, 'patch'),
  }),
  route({
    method: 'POST', url: '/meetings/:id/cancel', access: write, feature, summary: 'Cancel a meeting (attendees get a cancellation); final', tags,
    errors: ['meeting_cancelled'],
    schema: { params: IdParams, body: MeetingCancel, response: { 200: MeetingOut } },
    example: { body: { reason: 'Solved by mail' } },
    handler: (ctx, { params, body }) => cancelMeeting(ctx, params.id, body.reason),
  }),
  route({
    method: 'DELETE', url: '/meetings/:id', access: { kind: 'token', scope: 'meetings:delete' }, feature, summary: 'Delete a meeting record (an active one is cancelled for its attendees first)', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteMeeting(ctx, params.id),
  }),
  // Connectors (SPEC "Meeting rules" 6): registered by an administrator, connected by each agent.
  route({
    method: 'GET', url: '/connectors', access: { kind: 'token', scope: 'meetings:read', roles: ADMIN }, feature, summary: 'Registered connectors (secrets masked)', tags,
    schema: { response: { 200: ConnectorList } },
    handler: (ctx) => listConnectors(ctx),
  }),
  route({
    method: 'PUT', url: '/connectors/:provider', access: { kind: 'token', scope: 'meetings:write', roles: ADMIN }, feature,
    summary: 'Register or change a video or calendar connector (client id, client secret, base URL)', tags,
    schema: { params: ProviderParams, body: ConnectorPut, response: { 200: ConnectorOut } },
    example: { body: { client_id: 'helpdesk-app', client_secret: 'from-the-vendor-console', base_url: 'https://calendar.vendor.example' } },
    handler: (ctx, { params, body }) => putConnector(ctx, params.provider as ConnectorProvider, body),
  }),
  route({
    method: 'DELETE', url: '/connectors/:provider', access: { kind: 'token', scope: 'meetings:write', roles: ADMIN }, feature,
    summary: 'Remove a connector and every account connected through it', tags,
    schema: { params: ProviderParams }, status: 204,
    handler: (ctx, { params }) => deleteConnector(ctx, params.provider as ConnectorProvider),
  }),
  route({
    method: 'GET', url: '/connectors/accounts', access: read, feature, summary: 'The signed-in user\'s connected accounts', tags,
    schema: { response: { 200: ConnectedAccountList } },
    handler: (ctx) => myAccounts(ctx),
  }),
  route({
    method: 'POST', url: '/connectors/:provider/authorize', access: write, feature, summary: 'Start connecting a personal account: the vendor\'s OAuth 2.0 authorization URL', tags,
    errors: ['forbidden'],
    schema: { params: ProviderParams, response: { 200: AuthorizeAnswer } },
    handler: (ctx, { params }) => authorizeUrl(ctx, params.provider as ConnectorProvider),
  }),
  route({
    method: 'POST', url: '/connectors/:provider/connect', access: write, feature, summary: 'Finish connecting: exchange the authorization code (tokens are stored encrypted)', tags,
    errors: ['forbidden'],
    schema: { params: ProviderParams, body: ConnectBody, response: { 200: ConnectedAccount } },
    example: { body: { code: 'code-from-the-redirect', state: 'state-from-authorize' } },
    handler: (ctx, { params, body }) => connectAccount(ctx, params.provider as ConnectorProvider, body),
  }),
  route({
    method: 'DELETE', url: '/connectors/:provider/account', access: write, feature, summary: 'Disconnect the signed-in user\'s account', tags,
    schema: { params: ProviderParams }, status: 204,
    handler: (ctx, { params }) => disconnectAccount(ctx, params.provider as ConnectorProvider),
  }),
  route({
    method: 'POST', url: '/integrations/calendar_a/webhook', access: { kind: 'public' }, summary: 'Change notifications of the mail-suite calendar (verified by clientState)', tags,
    description: 'With ?validationToken= (the subscription handshake) answers the token as text/plain.',
    errors: ['forbidden'], transaction: false,
    binary: { description: 'text/plain: the validation token, or how many notifications were accepted', ranges: false },
    schema: { querystring: CalendarWebhookQuery, body: CalendarWebhookBody },
    example: { body: { value: [{ subscriptionId: 'sub-1', clientState: 'secret' }] } },
    handler: async (ctx, { query, body }) => textReply((await calendarAWebhook(ctx.deps, { validationToken: query.validationToken, value: body?.value }, ctx.now)).text),
  }),
  route({
    method: 'POST', url: '/integrations/calendar_b/webhook', access: { kind: 'public' }, summary: 'Push notifications of the web calendar (verified by the channel token)', tags,
    description: 'Reads X-Goog-Channel-ID and X-Goog-Channel-Token; the body is ignored.',
    errors: ['forbidden'], transaction: false,
    binary: { description: 'text/plain: accepted', ranges: false },
    schema: {},
    handler: async (ctx, { request }) => textReply((await calendarBWebhook(ctx.deps, request.headers, ctx.now)).text),
  }),
];
