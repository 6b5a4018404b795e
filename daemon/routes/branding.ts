import { route } from '../route.js';
import { getBranding, updateBranding } from '../../src/branding/service.js';
import { Branding, BrandingPatch } from '../../src/branding/schemas.js';

/** Help-center branding (SPEC "Administration", CONTRACT §19). */
const tags = ['branding'];

export const brandingRoutes = [
  route({
    method: 'GET', url: '/branding', access: { kind: 'token', scope: 'branding:read' }, summary: 'The tenant\'s branding', tags,
    schema: { response: { 200: Branding } },
    handler: (ctx) => getBranding(ctx),
  }),
  route({
    method: 'PATCH', url: '/branding', access: { kind: 'token', scope: 'branding:write' }, summary: 'Change the branding (null restores a default)', tags,
    description: 'Colours are hex (`#rgb` or `#rrggbb`, stored as `#rrggbb`), the logo an https URL, the footer HTML is sanitised (basic formatting and https/mailto links survive; scripts, styles, images and event handlers do not).',
    schema: { body: BrandingPatch, response: { 200: Branding } },
    example: { body: { name: 'Acme Support', primary_color: '#112233', logo_url: 'https://cdn.acme.example/logo.png', footer_html: '<p>Acme Inc. · <a href="https://acme.example/privacy">Privacy</a></p>' } },
    handler: (ctx, { body }) => updateBranding(ctx, body),
  }),
  route({
    method: 'GET', url: '/branding/public', access: { kind: 'tenant' }, summary: 'The branding for portals (tenant from X-Helpdesk-Tenant or Host)', tags,
    schema: { response: { 200: Branding } },
    handler: (ctx) => getBranding(ctx),
  }),
];
