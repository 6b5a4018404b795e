import { route } from '../route.js';
import { ListOf, PageQuery } from '../../src/core/pagination.js';
import { IdParams } from '../../src/core/schema-types.js';
import { assignSkill, createSkill, deleteSkill, getSkill, listSkills, listUserSkills, removeSkill, updateSkill } from '../../src/directory/skills.js';
import { Skill, SkillCreate, SkillUpdate, UserSkillParams } from '../../src/directory/schemas.js';

/** Skills and the users who have them (SPEC "Users, consent, teams, organizations, skills"). */
const tags = ['skills'];

export const skillsRoutes = [
  route({
    method: 'GET', url: '/skills', access: { kind: 'token', scope: 'skills:read' }, summary: 'List skills', tags,
    schema: { querystring: PageQuery, response: { 200: ListOf(Skill) } },
    handler: (ctx, { query }) => listSkills(ctx, query),
  }),
  route({
    method: 'POST', url: '/skills', access: { kind: 'token', scope: 'skills:write' }, summary: 'Create a skill', tags,
    errors: ['already_exists'],
    schema: { body: SkillCreate, response: { 201: Skill } }, status: 201,
    example: { body: { name: 'German', description: 'Answers in German' } },
    handler: (ctx, { body }) => createSkill(ctx, body),
  }),
  route({
    method: 'GET', url: '/skills/:id', access: { kind: 'token', scope: 'skills:read' }, summary: 'A skill', tags,
    schema: { params: IdParams, response: { 200: Skill } },
    handler: (ctx, { params }) => getSkill(ctx, params.id),
  }),
  route({
    method: 'PATCH', url: '/skills/:id', access: { kind: 'token', scope: 'skills:write' }, summary: 'Update a skill', tags,
    errors: ['already_exists'],
    schema: { params: IdParams, body: SkillUpdate, response: { 200: Skill } },
    example: { body: { description: 'Answers in German and Swiss German' } },
    handler: (ctx, { params, body }) => updateSkill(ctx, params.id, body),
  }),
  route({
    method: 'DELETE', url: '/skills/:id', access: { kind: 'token', scope: 'skills:delete' }, summary: 'Delete a skill', tags,
    schema: { params: IdParams }, status: 204,
    handler: (ctx, { params }) => deleteSkill(ctx, params.id),
  }),
  route({
    method: 'GET', url: '/users/:id/skills', access: { kind: 'token', scope: 'skills:read' }, summary: "A user's skills", tags,
    schema: { params: IdParams, querystring: PageQuery, response: { 200: ListOf(Skill) } },
    handler: (ctx, { params, query }) => listUserSkills(ctx, params.id, query),
  }),
  route({
    method: 'POST', url: '/users/:id/skills/:skillId', access: { kind: 'token', scope: 'skills:write' }, summary: 'Give a staff user a skill', tags,
    errors: ['conflict'],
    schema: { params: UserSkillParams, response: { 201: Skill } }, status: 201,
    handler: (ctx, { params }) => assignSkill(ctx, params.id, params.skillId),
  }),
  route({
    method: 'DELETE', url: '/users/:id/skills/:skillId', access: { kind: 'token', scope: 'skills:delete' }, summary: 'Take a skill from a user', tags,
    schema: { params: UserSkillParams }, status: 204,
    handler: (ctx, { params }) => removeSkill(ctx, params.id, params.skillId),
  }),
];
