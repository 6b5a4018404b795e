import { ADMIN, route } from '../route.js';
import { ListOf } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import {
  createHoliday, deleteHoliday, getBusinessHours, listHolidays, putBusinessHours, updateHoliday,
} from '../../src/sla/business-hours.js';
import { deleteOverride, listPolicies, patchOverride, patchPolicy } from '../../src/sla/policies.js';
import {
  BusinessHoursInput, BusinessHoursSchema, Holiday, HolidayCreate, HolidayListQuery, HolidayUpdate, PriorityParams, SlaOverride,
  SlaOverridePatch, SlaPolicy, SlaPolicyList, SlaPolicyPatch, TypePriorityParams,
} from '../../src/sla/schemas.js';

/** SLA configuration: business hours, holidays, policies per priority, overrides per ticket type (SPEC "Configuration"). */
const tags = ['sla'];

export const slaRoutes = [
  route({
    method: 'GET', url: '/business-hours', access: { kind: 'token', scope: 'business_hours:read' }, summary: 'The business hours (schedule form)', tags,
    schema: { response: { 200: BusinessHoursSchema } },
    handler: (ctx) => getBusinessHours(ctx),
  }),
  route({
    method: 'PUT', url: '/business-hours', access: { kind: 'token', scope: 'business_hours:write' }, summary: 'Replace the business hours', tags,
    description: 'Accepts `{timezone, schedule: {monday: …}}` or `{timezone, monday: …}`; a day is `{open, close}` (close may be 24:00) or `{is_closed: true}`; a day left out is closed.',
    schema: { body: BusinessHoursInput, response: { 200: BusinessHoursSchema } },
    example: { body: { timezone: 'Europe/Berlin', schedule: { monday: { open: '08:00', close: '18:00' }, tuesday: { open: '08:00', close: '18:00' }, saturday: { is_closed: true } } } },
    handler: (ctx, { body }) => putBusinessHours(ctx, body),
  }),
  route({
    method: 'GET', url: '/business-hours/holidays', access: { kind: 'token', scope: 'business_hours:read' }, summary: 'List holidays', tags,
    schema: { querystring: HolidayListQuery, response: { 200: ListOf(Holiday) } },
    handler: (ctx, { query }) => listHolidays(ctx, query),
  }),
  route({
    method: 'POST', url: '/business-hours/holidays', access: { kind: 'token', scope: 'business_hours:write' }, summary: 'Add a holiday', tags,
    errors: ['already_exists'],
    schema: { body: HolidayCreate, response: { 201: Holiday } }, status: 201,
    example: { body: { name: 'Christmas Day', date: '2026-12-25', recurring: true } },
    handler: (ctx, { body }) => createHoliday(ctx, body),
  }),
  route({
    method: 'PATCH', url: '/business-hours/holidays/:id', access: { kind: 'token', scope: 'business_hours:write' }, summary: 'Change a holiday', tags,
    errors: ['already_exists'],
    schema: { params: IdParams, body: HolidayUpdate, response: { 200: Holiday } },
    example: { body: { name: 'Boxing Day', date: '2026-12-26' } },
    handler: (ctx, { params, body }) => updateHoliday(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/business-hours/holidays/:id', access: { kind: 'token', scope: 'business_hours:delete' }, summary: 'Remove a holiday', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteHoliday(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/sla-policies', access: { kind: 'token', scope: 'sla_policies:read' }, summary: 'The SLA policy of every priority', tags,
    schema: { response: { 200: SlaPolicyList } },
    handler: (ctx) => listPolicies(ctx),
  }),
  route({
    method: 'PATCH', url: '/sla-policies/:priorityId', access: { kind: 'token', scope: 'sla_policies:write' }, summary: 'Set the SLA policy of a priority', tags,
    description: 'Upsert: the fields sent are set, the others keep their current value (the default matrix until first edited). Affects tickets created afterwards.',
    schema: { params: PriorityParams, body: SlaPolicyPatch, response: { 200: SlaPolicy } },
    example: { body: { first_response_time_minutes: 30, respect_business_hours: false } },
    handler: (ctx, { params, body }) => patchPolicy(ctx, params.priorityId, body),
  }),
  route({
    method: 'PATCH', url: '/ticket-types/:typeId/sla-policies/:priorityId', access: { kind: 'token', roles: ADMIN }, summary: 'Set the SLA override of a ticket type and priority', tags,
    description: 'Upsert: fields sent are set, null clears one. `resolve_hours` × 60 replaces the resolution minutes; the clock stays the policy\'s.',
    schema: { params: TypePriorityParams, body: SlaOverridePatch, response: { 200: SlaOverride } },
    example: { body: { resolve_hours: 4, warn_percent: 75 } },
    handler: (ctx, { params, body }) => patchOverride(ctx, params.typeId, params.priorityId, body),
  }),
  route({
    method: 'DELETE', url: '/ticket-types/:typeId/sla-policies/:priorityId', access: { kind: 'token', roles: ADMIN }, summary: 'Clear the SLA override of a ticket type and priority', tags,
    schema: { params: TypePriorityParams }, status: 204,
    handler: (ctx, { params }) => deleteOverride(ctx, params.typeId, params.priorityId),
  }),
];
