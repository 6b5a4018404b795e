import { Type } from '@sinclair/typebox';
import { ADMIN, route } from '../route.js';
import { applyLicense, licenseStatus, LicenseStatus } from '../../src/licensing/service.js';

/** The tenant's licence: status and installation (CONTRACT §8). */
const tags = ['license'];

export const licenseRoutes = [
  route({
    method: 'GET', url: '/license', access: { kind: 'token', scope: 'license:read' }, summary: 'Licence status, edition, seats and features', tags,
    schema: { response: { 200: LicenseStatus } },
    handler: (ctx) => licenseStatus(ctx),
  }),
  route({
    method: 'POST', url: '/license', access: { kind: 'token', scope: 'license:write', roles: ADMIN }, summary: 'Install a signed licence', tags, operationId: 'license.install',
    schema: {
      body: Type.Object({ license: Type.String({ minLength: 1, maxLength: 20_000 }) }, { $id: 'LicenseInstall', additionalProperties: false }),
      response: { 200: LicenseStatus },
    },
    example: { body: { license: 'e30.AA' } },
    handler: (ctx, { body }) => applyLicense(ctx, body.license),
  }),
];
