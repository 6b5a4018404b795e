/**
 * The shipped notification templates: the spec's seven identifiers, in English and German.
 * A tenant's edits are stored apart (notification_templates) and `DELETE` restores these.
 * Only the placeholders of PLACEHOLDERS (render.ts) may appear.
 */
export const IDENTIFIERS = [
  'ticket.created.customer', 'ticket.created.agent', 'ticket.assigned', 'ticket.reply.customer',
  'ticket.reply.agent', 'ticket.resolved', 'sla.warning',
] as const;
export type Identifier = (typeof IDENTIFIERS)[number];

export type Audience = 'customer' | 'agent' | 'leads_and_admins';
export const AUDIENCE: Record<Identifier, Audience> = {
  'ticket.created.customer': 'customer',
  'ticket.created.agent': 'agent',
  'ticket.assigned': 'agent',
  'ticket.reply.customer': 'customer',
  'ticket.reply.agent': 'agent',
  'ticket.resolved': 'customer',
  'sla.warning': 'leads_and_admins',
};

export interface TemplateText { subject: string; body_html: string }

export const DEFAULT_LOCALE = 'en';

export const SHIPPED: Record<Identifier, Record<string, TemplateText>> = {
  'ticket.created.customer': {
    en: {
      subject: 'We received your request: {{ticket.subject}}',
      body_html: '<p>Hello {{customer.name}},</p><p>Thank you for contacting us. Your request has been received as ticket #{{ticket.number}} and we will get back to you soon.</p><blockquote>{{message.body}}</blockquote><p>Reply to this email to add information. You can follow the ticket at <a href="{{ticket.url}}">{{ticket.url}}</a>.</p>',
    },
    de: {
      subject: 'Wir haben Ihre Anfrage erhalten: {{ticket.subject}}',
      body_html: '<p>Hallo {{customer.name}},</p><p>vielen Dank für Ihre Nachricht. Ihre Anfrage ist als Ticket #{{ticket.number}} eingegangen; wir melden uns bald.</p><blockquote>{{message.body}}</blockquote><p>Antworten Sie auf diese E-Mail, um etwas zu ergänzen. Den Stand sehen Sie unter <a href="{{ticket.url}}">{{ticket.url}}</a>.</p>',
    },
  },
  'ticket.created.agent': {
    en: {
      subject: 'New ticket: {{ticket.subject}}',
      body_html: '<p>{{customer.name}} opened ticket #{{ticket.number}}.</p><blockquote>{{message.body}}</blockquote><p><a href="{{ticket.url}}">Open the ticket</a></p>',
    },
    de: {
      subject: 'Neues Ticket: {{ticket.subject}}',
      body_html: '<p>{{customer.name}} hat Ticket #{{ticket.number}} eröffnet.</p><blockquote>{{message.body}}</blockquote><p><a href="{{ticket.url}}">Ticket öffnen</a></p>',
    },
  },
  'ticket.assigned': {
    en: {
      subject: 'Assigned to you: {{ticket.subject}}',
      body_html: '<p>Hello {{agent.name}},</p><p>ticket #{{ticket.number}} from {{customer.name}} is now assigned to you.</p><p><a href="{{ticket.url}}">Open the ticket</a></p>',
    },
    de: {
      subject: 'Ihnen zugewiesen: {{ticket.subject}}',
      body_html: '<p>Hallo {{agent.name}},</p><p>Ticket #{{ticket.number}} von {{customer.name}} ist Ihnen jetzt zugewiesen.</p><p><a href="{{ticket.url}}">Ticket öffnen</a></p>',
    },
  },
  'ticket.reply.customer': {
    en: {
      subject: 'Re: {{ticket.subject}}',
      body_html: '<p>{{message.body}}</p><p>— {{agent.name}}</p><p>Reply to this email to answer. Ticket: <a href="{{ticket.url}}">{{ticket.url}}</a></p>',
    },
    de: {
      subject: 'Re: {{ticket.subject}}',
      body_html: '<p>{{message.body}}</p><p>— {{agent.name}}</p><p>Antworten Sie einfach auf diese E-Mail. Ticket: <a href="{{ticket.url}}">{{ticket.url}}</a></p>',
    },
  },
  'ticket.reply.agent': {
    en: {
      subject: 'Customer replied: {{ticket.subject}}',
      body_html: '<p>{{customer.name}} replied on ticket #{{ticket.number}}:</p><blockquote>{{message.body}}</blockquote><p><a href="{{ticket.url}}">Open the ticket</a></p>',
    },
    de: {
      subject: 'Antwort des Kunden: {{ticket.subject}}',
      body_html: '<p>{{customer.name}} hat auf Ticket #{{ticket.number}} geantwortet:</p><blockquote>{{message.body}}</blockquote><p><a href="{{ticket.url}}">Ticket öffnen</a></p>',
    },
  },
  'ticket.resolved': {
    en: {
      subject: 'Resolved: {{ticket.subject}}',
      body_html: '<p>Hello {{customer.name}},</p><p>we have resolved ticket #{{ticket.number}}. If something is still missing, just reply to this email and the ticket opens again.</p><p>How did we do? <a href="{{csat.url}}">Rate our support</a></p>',
    },
    de: {
      subject: 'Gelöst: {{ticket.subject}}',
      body_html: '<p>Hallo {{customer.name}},</p><p>wir haben Ticket #{{ticket.number}} gelöst. Fehlt noch etwas, antworten Sie einfach auf diese E-Mail; das Ticket wird dann wieder geöffnet.</p><p>Wie zufrieden waren Sie? <a href="{{csat.url}}">Support bewerten</a></p>',
    },
  },
  'sla.warning': {
    en: {
      subject: 'SLA deadline approaching: {{ticket.subject}}',
      body_html: '<p>Ticket #{{ticket.number}} from {{customer.name}} is nearing its SLA deadline. Assigned to: {{agent.name}}.</p><p><a href="{{ticket.url}}">Open the ticket</a></p>',
    },
    de: {
      subject: 'SLA-Frist läuft bald ab: {{ticket.subject}}',
      body_html: '<p>Ticket #{{ticket.number}} von {{customer.name}} nähert sich seiner SLA-Frist. Zugewiesen an: {{agent.name}}.</p><p><a href="{{ticket.url}}">Ticket öffnen</a></p>',
    },
  },
};

export function isIdentifier(value: string): value is Identifier {
  return (IDENTIFIERS as readonly string[]).includes(value);
}
