import { Type, type Static } from '@sinclair/typebox';
import { Nullable, withMessage } from '../core/schema-types.js';

/** Request and response schemas of /branding (CONTRACT §19). */
const HEX = withMessage('^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$', 'must be a hex colour such as #0b57d0');
const HTTPS = withMessage('^https://[^\\s/?#]+', 'must be an https URL');
const EMAIL = withMessage('^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', 'must be an email address');

export const Branding = Type.Object({
  name: Type.String({ description: 'Shown in page and mail headers; defaults to the tenant name' }),
  logo_url: Nullable(Type.String()),
  primary_color: Type.String({ description: '#rrggbb' }),
  accent_color: Type.String({ description: '#rrggbb' }),
  help_center_title: Type.String(),
  support_email: Nullable(Type.String()),
  footer_html: Type.String({ description: 'Sanitised HTML: basic formatting and https/mailto links only' }),
  updated_at: Nullable(Type.String()),
}, { $id: 'Branding' });
export type BrandingOut = Static<typeof Branding>;

export const BrandingPatch = Type.Object({
  name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  logo_url: Type.Optional(Nullable(Type.String({ maxLength: 2000, pattern: HTTPS }))),
  primary_color: Type.Optional(Nullable(Type.String({ maxLength: 7, pattern: HEX }))),
  accent_color: Type.Optional(Nullable(Type.String({ maxLength: 7, pattern: HEX }))),
  help_center_title: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  support_email: Type.Optional(Nullable(Type.String({ maxLength: 320, pattern: EMAIL }))),
  footer_html: Type.Optional(Nullable(Type.String({ maxLength: 20_000 }))),
}, { $id: 'BrandingPatch', additionalProperties: false, minProperties: 1, description: 'Fields to change; null restores the default' });
export type BrandingPatchIn = Static<typeof BrandingPatch>;
