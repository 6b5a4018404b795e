import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { route } from '../route.js';
import { toRfc3339 } from '../../src/core/clock.js';
import { issueCsrfToken } from '../../src/auth/csrf.js';
import { completeTwoFactorLogin, login } from '../../src/auth/login.js';
import { register } from '../../src/auth/registration.js';
import { endCurrentSession } from '../../src/auth/sessions.js';
import { requestPasswordReset, resetPassword } from '../../src/auth/password-reset.js';
import { getProfile, updateProfile } from '../../src/auth/profile.js';
import { changePassword } from '../../src/auth/password-change.js';
import {
  ChallengeAnswer, CsrfAnswer, Empty, ForgotPasswordBody, LoginAnswer, LoginBody, PasswordChangeBody, Profile, ProfilePatch,
  RegisterBody, ResetPasswordBody, TwoFactorLoginBody,
} from '../../src/auth/schemas.js';

/** Sessions, sign-up, password reset and the caller's profile (SPEC "Session and profile", CONTRACT §3). */
const tags = ['auth'];
const userAgent = (request: FastifyRequest) => request.headers['user-agent'] ?? null;

export const authRoutes = [
  route({
    method: 'GET', url: '/auth/csrf', access: { kind: 'tenant' }, summary: 'Get an anti-CSRF token (valid 2 hours)', tags,
    schema: { response: { 200: CsrfAnswer } },
    handler: async (ctx) => {
      const { token, expiresAt } = issueCsrfToken(ctx.deps.box, ctx.tenantId, ctx.now);
      return { csrf_token: token, expires_at: toRfc3339(expiresAt) };
    },
  }),
  route({
    method: 'POST', url: '/auth/login', access: { kind: 'csrf' }, summary: 'Sign in with email and password', tags,
    errors: ['invalid_credentials'],
    // No surrounding transaction: a refused attempt must stay recorded for the throttle (see src/auth/login.ts).
    transaction: false,
    schema: { body: LoginBody, response: { 200: Type.Union([LoginAnswer, ChallengeAnswer]) } },
    example: { body: { email: 'agent@example.com', password: 'correct horse battery staple' } },
    handler: (ctx, { body, request }) => login(ctx, { ...body, userAgent: userAgent(request) }),
  }),
  route({
    method: 'POST', url: '/auth/login/2fa', access: { kind: 'csrf' }, summary: 'Complete a sign-in with a TOTP or recovery code', tags,
    errors: ['invalid_two_factor_code'],
    transaction: false,
    schema: { body: TwoFactorLoginBody, response: { 200: LoginAnswer } },
    example: { body: { challenge_token: 'challenge-token-from-login', code: '123456' } },
    handler: (ctx, { body, request }) =>
      completeTwoFactorLogin(ctx, { challengeToken: body.challenge_token, code: body.code, userAgent: userAgent(request) }),
  }),
  route({
    method: 'POST', url: '/auth/register', access: { kind: 'csrf' }, summary: 'Register a customer portal account and sign in', tags,
    errors: ['already_exists'],
    status: 201,
    schema: { body: RegisterBody, response: { 201: LoginAnswer } },
    example: { body: { email: 'new.customer@example.com', name: 'New Customer', password: 'a long enough passphrase' } },
    handler: (ctx, { body, request }) => register(ctx, { ...body, userAgent: userAgent(request) }),
  }),
  route({
    method: 'POST', url: '/auth/logout', access: { kind: 'csrf' }, summary: 'End the current session (idempotent)', tags,
    status: 204,
    schema: {},
    handler: (ctx) => endCurrentSession(ctx),
  }),
  route({
    method: 'POST', url: '/auth/forgot-password', access: { kind: 'csrf' }, summary: 'Mail a password reset link (same answer for unknown addresses)', tags,
    status: 202,
    schema: { body: ForgotPasswordBody, response: { 202: Empty } },
    example: { body: { email: 'agent@example.com' } },
    handler: async (ctx, { body }) => {
      await requestPasswordReset(ctx, body.email);
      return {};
    },
  }),
  route({
    method: 'POST', url: '/auth/reset-password', access: { kind: 'csrf' }, summary: 'Set a password from a reset or invitation token', tags,
    status: 204,
    schema: { body: ResetPasswordBody },
    example: { body: { token: 'token-from-the-mail', new_password: 'a long enough passphrase' } },
    handler: (ctx, { body }) => resetPassword(ctx, { token: body.token, newPassword: body.new_password }),
  }),
  route({
    method: 'GET', url: '/auth/me', access: { kind: 'token' }, authenticatedOnly: true, summary: 'Profile of the caller', tags,
    schema: { response: { 200: Profile } },
    handler: (ctx, { request }) => getProfile(ctx, request.identity.user),
  }),
  route({
    method: 'PATCH', url: '/auth/me', access: { kind: 'token' }, authenticatedOnly: true, summary: 'Update the caller\'s profile', tags,
    schema: { body: ProfilePatch, response: { 200: Profile } },
    example: { body: { timezone: 'Europe/Berlin', avatar_url: 'https://cdn.example.com/me.png' } },
    handler: (ctx, { body }) => updateProfile(ctx, body),
  }),
  route({
    method: 'PATCH', url: '/auth/me/password', access: { kind: 'token' }, authenticatedOnly: true, summary: 'Change the caller\'s password', tags,
    // API keys may not change passwords.
    errors: ['forbidden'],
    status: 204,
    schema: { body: PasswordChangeBody },
    example: { body: { current_password: 'the current passphrase', new_password: 'a new long passphrase' } },
    handler: (ctx, { body }) => changePassword(ctx, { currentPassword: body.current_password, newPassword: body.new_password }),
  }),
];
