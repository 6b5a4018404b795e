import { route } from '../route.js';
import { ListOf, PageQuery } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import {
  addTeamMember, createTeam, deleteTeam, getTeam, listTeamMembers, listTeams, myTeams, removeTeamMember, updateTeam, updateTeamMember,
} from '../../src/directory/teams.js';
import { Team, TeamCreate, TeamMember, TeamMemberAdd, TeamMemberParams, TeamMemberUpdate, TeamUpdate } from '../../src/directory/schemas.js';

/** Teams and their members (SPEC "Users, consent, teams…", CONTRACT §5 "Team members"). */
const tags = ['teams'];

export const teamsRoutes = [
  route({
    method: 'GET', url: '/teams', access: { kind: 'token', scope: 'teams:read' }, summary: 'List teams', tags,
    schema: { querystring: PageQuery, response: { 200: ListOf(Team) } },
    handler: (ctx, { query }) => listTeams(ctx, query),
  }),
  route({
    method: 'POST', url: '/teams', access: { kind: 'token', scope: 'teams:write' }, summary: 'Create a team', tags,
    errors: ['already_exists'],
    schema: { body: TeamCreate, response: { 201: Team } }, status: 201,
    example: { body: { name: 'Billing', description: 'Invoices and refunds' } },
    handler: (ctx, { body }) => createTeam(ctx, body),
  }),
  route({
    method: 'GET', url: '/teams/mine', access: { kind: 'token', scope: 'teams:read' }, summary: "The caller's teams", tags,
    schema: { querystring: PageQuery, response: { 200: ListOf(Team) } },
    handler: (ctx, { query }) => myTeams(ctx, query),
  }),
  route({
    method: 'GET', url: '/teams/:id', access: { kind: 'token', scope: 'teams:read' }, summary: 'A team', tags,
    schema: { params: IdParams, response: { 200: Team } },
    handler: (ctx, { params }) => getTeam(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/teams/:id', access: { kind: 'token', scope: 'teams:write' }, summary: 'Update a team', tags,
    errors: ['already_exists'],
    schema: { params: IdParams, body: TeamUpdate, response: { 200: Team } },
    example: { body: { description: 'Invoices, refunds and dunning' } },
    handler: (ctx, { params, body }) => updateTeam(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/teams/:id', access: { kind: 'token', scope: 'teams:delete' }, summary: 'Delete a team', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteTeam(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/teams/:id/members', access: { kind: 'token', scope: 'teams:read' }, summary: "A team's members, leads first", tags,
    schema: { params: IdParams, querystring: PageQuery, response: { 200: ListOf(TeamMember) } },
    handler: (ctx, { params, query }) => listTeamMembers(ctx, params.id, query),
  }),
  route({
    method: 'POST', url: '/teams/:id/members', access: { kind: 'token', scope: 'teams:write' }, summary: 'Add an agent or admin to a team', tags,
    errors: ['already_exists'],
    schema: { params: IdParams, body: TeamMemberAdd, response: { 201: TeamMember } }, status: 201,
    example: { body: { user_id: '0190a1b2-0000-7000-8000-000000000001', is_lead: true } },
    handler: (ctx, { params, body }) => addTeamMember(ctx, params.id, body),
  }),
  route({
    method: 'PATCH', url: '/teams/:id/members/:userId', access: { kind: 'token', scope: 'teams:write' }, summary: "Change a member's lead flag", tags,
    schema: { params: TeamMemberParams, body: TeamMemberUpdate, response: { 200: TeamMember } },
    example: { body: { is_lead: true } },
    handler: (ctx, { params, body }) => updateTeamMember(ctx, params.id, params.userId, body),
  }),
  route({
    method: 'DELETE', url: '/teams/:id/members/:userId', access: { kind: 'token', scope: 'teams:delete' }, summary: 'Remove a member from a team', tags,
    schema: { params: TeamMemberParams }, status: 204,
    handler: (ctx, { params }) => removeTeamMember(ctx, params.id, params.userId),
  }),
];
