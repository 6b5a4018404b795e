import type { Role } from '../core/context.js';

/**
 * The scope catalogue: every `<resource>:<action>` scope the API uses (SPEC "Authentication" and
 * the endpoint tables). API keys may be issued only with these, `<resource>:*`, or `admin`.
 */
export const SCOPE_RESOURCES = [
  'tickets', 'users', 'organizations', 'tags', 'kb', 'kb_documents', 'reporting', 'meetings', 'macros',
  'canned_responses', 'time_entries', 'teams', 'skills', 'routing_rules', 'sla_policies', 'ticket_types',
  'custom_fields', 'business_hours', 'bot_flows', 'channel_sources', 'whatsapp_templates', 'webchat_console',
  'extension_context', 'extensions', 'chatops', 'chatops_integrations', 'webhook_endpoints', 'audit_log',
  'branding', 'csat_settings', 'mail_settings', 'osticket_import', 'license', 'api_keys',
] as const;

export const SCOPE_ACTIONS = ['read', 'write', 'delete'] as const;

export const ALL_SCOPES: readonly string[] = [
  'admin',
  ...SCOPE_RESOURCES.flatMap((r) => SCOPE_ACTIONS.map((a) => `${r}:${a}`)),
];

const KNOWN = new Set(ALL_SCOPES);

export function isKnownScope(scope: string): boolean {
  if (KNOWN.has(scope)) return true;
  const [resource, action] = scope.split(':');
  return action === '*' && (SCOPE_RESOURCES as readonly string[]).includes(resource ?? '');
}

/** Scopes a session token holds, by role (CONTRACT §3). Admins hold `admin`, i.e. everything. */
export const ROLE_SCOPES: Record<Role, readonly string[]> = {
  admin: ['admin'],
  agent: [
    'tickets:*', 'users:read', 'organizations:read', 'tags:*', 'kb:read', 'kb:write', 'kb_documents:read', 'meetings:*',
    'macros:read', 'canned_responses:read', 'time_entries:*', 'teams:read', 'skills:read', 'routing_rules:read',
    'sla_policies:read', 'ticket_types:read', 'custom_fields:read', 'business_hours:read', 'bot_flows:read',
    'channel_sources:read', 'webchat_console:*', 'extension_context:*', 'chatops:*', 'license:read',
  ],
  customer: ['tickets:read', 'tickets:write'],
};

/** Does a set of held scopes grant `required`? `admin` grants all; `res:*` grants every action of res. */
export function grants(held: readonly string[], required: string): boolean {
  if (held.includes('admin') || held.includes(required)) return true;
  const [resource] = required.split(':');
  return held.includes(`${resource}:*`);
}
