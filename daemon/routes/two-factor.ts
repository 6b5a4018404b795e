import { route } from '../route.js';
import { confirmTwoFactor, disableTwoFactor, setupTwoFactor, twoFactorStatus } from '../../src/auth/two-factor.js';
import {
  TwoFactorConfirmAnswer, TwoFactorConfirmBody, TwoFactorDisableBody, TwoFactorDisabledAnswer, TwoFactorSetupAnswer, TwoFactorStatus,
} from '../../src/auth/schemas.js';

/** TOTP enrolment of the signed-in user (CONTRACT §3); API keys are refused by the service. */
const tags = ['two-factor'];

export const twoFactorRoutes = [
  route({
    method: 'GET', url: '/2fa', access: { kind: 'token' }, authenticatedOnly: true, summary: 'Two-factor enrolment status', tags,
    errors: ['forbidden'],
    schema: { response: { 200: TwoFactorStatus } },
    handler: (ctx) => twoFactorStatus(ctx),
  }),
  route({
    method: 'POST', url: '/2fa/setup', access: { kind: 'token' }, authenticatedOnly: true, summary: 'Start enrolment: a TOTP secret and its otpauth URI', tags,
    errors: ['forbidden', 'conflict'],
    schema: { response: { 200: TwoFactorSetupAnswer } },
    handler: (ctx) => setupTwoFactor(ctx),
  }),
  route({
    method: 'POST', url: '/2fa/confirm', access: { kind: 'token' }, authenticatedOnly: true, summary: 'Finish enrolment with a code; returns recovery codes', tags,
    errors: ['forbidden', 'conflict', 'invalid_two_factor_code'],
    schema: { body: TwoFactorConfirmBody, response: { 200: TwoFactorConfirmAnswer } },
    example: { body: { code: '123456' } },
    handler: (ctx, { body }) => confirmTwoFactor(ctx, body.code),
  }),
  route({
    method: 'POST', url: '/2fa/disable', access: { kind: 'token' }, authenticatedOnly: true, summary: 'Disable two-factor authentication (needs the password)', tags,
    errors: ['forbidden'],
    schema: { body: TwoFactorDisableBody, response: { 200: TwoFactorDisabledAnswer } },
    example: { body: { password: 'the current passphrase' } },
    handler: (ctx, { body }) => disableTwoFactor(ctx, body.password),
  }),
];
