import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../core/schema-types.js';

/** Request and response schemas of mail settings and notification templates (CONTRACT §14). */

export const SECURITY = ['tls', 'starttls', 'none'] as const;
export const MASKED_PASSWORD = '********';

const Host = Type.String({ minLength: 1, maxLength: 253, description: 'Host name or IP address; private addresses only with HELPDESK_WEBHOOKS_ALLOW_PRIVATE=1' });
const Port = Type.Integer({ minimum: 1, maximum: 65535 });
const Email = Type.String({ format: 'email', maxLength: 320 });

export const SmtpSettingsIn = Type.Object({
  host: Host,
  port: Port,
  security: StringEnum(SECURITY),
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
  password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: `Stored encrypted; "${MASKED_PASSWORD}" keeps the stored one` })),
  from_address: Email,
  from_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
}, { additionalProperties: false });

export const ImapSettingsIn = Type.Object({
  host: Host,
  port: Port,
  security: StringEnum(SECURITY),
  username: Type.String({ minLength: 1, maxLength: 320 }),
  password: Type.String({ minLength: 1, maxLength: 1024, description: `Stored encrypted; "${MASKED_PASSWORD}" keeps the stored one` }),
  mailbox: Type.Optional(Type.String({ minLength: 1, maxLength: 200, default: 'INBOX' })),
  poll_interval_seconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 86400, default: 60 })),
  delete_after_import: Type.Optional(Type.Boolean({ default: false })),
}, { additionalProperties: false });

export const MailSettingsIn = Type.Object({
  smtp: Type.Optional(Nullable(SmtpSettingsIn)),
  imap: Type.Optional(Nullable(ImapSettingsIn)),
}, { additionalProperties: false, description: 'Only the parts sent change; null removes a part' });
export type MailSettingsIn = Static<typeof MailSettingsIn>;

const SmtpSettingsOut = Type.Object({
  host: Type.String(),
  port: Type.Integer(),
  security: StringEnum(SECURITY),
  username: Nullable(Type.String()),
  password: Nullable(Type.String({ description: `"${MASKED_PASSWORD}" when one is stored` })),
  from_address: Type.String(),
  from_name: Nullable(Type.String()),
});

const ImapSettingsOut = Type.Object({
  host: Type.String(),
  port: Type.Integer(),
  security: StringEnum(SECURITY),
  username: Type.String(),
  password: Type.String({ description: `Always "${MASKED_PASSWORD}"` }),
  mailbox: Type.String(),
  poll_interval_seconds: Type.Integer(),
  delete_after_import: Type.Boolean(),
  last_polled_at: Nullable(Type.String()),
  last_error: Nullable(Type.String()),
});

export const MailSettingsOut = Type.Object({
  smtp: Nullable(SmtpSettingsOut),
  imap: Nullable(ImapSettingsOut),
  inbound_url: Type.String({ description: 'POST a raw RFC 822 message here (Content-Type: message/rfc822)' }),
}, { $id: 'MailSettings' });
export type MailSettingsOut = Static<typeof MailSettingsOut>;

export const TestSmtpIn = Type.Object({
  to: Type.Optional(Email),
}, { additionalProperties: false });

export const TestAnswer = Type.Object({
  ok: Type.Boolean(),
  error: Type.Optional(Type.String()),
}, { $id: 'MailTestAnswer' });
export type TestAnswer = Static<typeof TestAnswer>;

export const InboundAnswer = Type.Object({
  ticket_id: Type.Optional(Type.String()),
  message_id: Type.Optional(Type.String()),
  created_ticket: Type.Optional(Type.Boolean()),
  ignored: Type.Optional(Type.String({ description: 'auto_reply, own_address, duplicate, rate_limited, calendar_reply, no_sender' })),
}, { $id: 'InboundMailAnswer' });
export type InboundAnswer = Static<typeof InboundAnswer>;

export const InboundParams = Type.Object({ token: Type.String({ maxLength: 100 }) });

// Templates
export const Locale = Type.String({ pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$', maxLength: 35, description: 'BCP 47, e.g. en, de, pt-BR' });

export const TemplateText = Type.Object({ subject: Type.String(), body_html: Type.String() });

export const NotificationTemplate = Type.Object({
  identifier: Type.String(),
  audience: StringEnum(['customer', 'agent', 'leads_and_admins'] as const),
  subject: Type.String(),
  body_html: Type.String(),
  translations: Type.Record(Type.String(), TemplateText),
  customized: Type.Boolean(),
}, { $id: 'NotificationTemplate' });
export type NotificationTemplate = Static<typeof NotificationTemplate>;

export const NotificationTemplateList = Type.Object({ data: Type.Array(NotificationTemplate) }, { $id: 'NotificationTemplateList' });

export const TemplateParams = Type.Object({ identifier: Type.String({ maxLength: 64 }) });

export const TemplatePatch = Type.Object({
  subject: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  body_html: Type.Optional(Type.String({ minLength: 1, maxLength: 100_000 })),
  locale: Type.Optional(Locale),
}, { additionalProperties: false });
export type TemplatePatch = Static<typeof TemplatePatch>;
