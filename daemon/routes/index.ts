import type { RouteDef } from '../route.js';
import { operationsRoutes } from './operations.js';
import { authRoutes } from './auth.js';
import { twoFactorRoutes } from './two-factor.js';
import { usersRoutes } from './users.js';
import { licenseRoutes } from './license.js';
import { apiKeysRoutes } from './api-keys.js';
import { auditLogRoutes } from './audit-log.js';
import { vocabRoutes } from './vocab.js';
import { ticketsRoutes } from './tickets.js';
import { organizationsRoutes } from './organizations.js';
import { teamsRoutes } from './teams.js';
import { skillsRoutes } from './skills.js';
import { customersRoutes } from './customers.js';
import { ticketStreamRoutes } from './ticket-stream.js';
import { ticketOpsRoutes } from './ticket-ops.js';
import { conversationRoutes } from './conversation.js';
import { slaRoutes } from './sla.js';
import { webhooksRoutes } from './webhooks.js';
import { legacyImportRoutes } from './legacy-import.js';
import { tagsRoutes } from './tags.js';
import { savedFiltersRoutes } from './saved-filters.js';
import { macrosRoutes } from './macros.js';
import { cannedResponsesRoutes } from './canned-responses.js';
import { routingRulesRoutes } from './routing-rules.js';
import { ticketToolsRoutes } from './ticket-tools.js';
import { csatFormRoutes, csatRoutes } from './csat.js';
import { pushRoutes } from './push.js';
import { mailRoutes } from './mail.js';
import { reportsRoutes } from './reports.js';
import { extensionHookRoutes, extensionsRoutes } from './extensions.js';
import { meetingsRoutes } from './meetings.js';
import { kbRoutes } from './kb.js';
import { botsRoutes } from './bots.js';
import { webchatRoutes } from './webchat.js';
import { channelsRoutes, channelWebhookRoutes } from './channels.js';
import { webformFormRoutes, webformsRoutes } from './webforms.js';
import { rolesRoutes } from './roles.js';
import { brandingRoutes } from './branding.js';
import { ticketArchiverRoutes } from './ticket-archiver.js';

/** Every route of the API, by area. A new area adds its list here. */
export const allRoutes: RouteDef[] = [
  ...operationsRoutes,
  ...authRoutes,
  ...twoFactorRoutes,
  ...usersRoutes,
  ...licenseRoutes,
  ...apiKeysRoutes,
  ...auditLogRoutes,
  ...vocabRoutes,
  ...ticketsRoutes,
  ...organizationsRoutes,
  ...teamsRoutes,
  ...skillsRoutes,
  ...customersRoutes,
  ...ticketStreamRoutes,
  ...ticketOpsRoutes,
  ...conversationRoutes,
  ...slaRoutes,
  ...webhooksRoutes,
  ...legacyImportRoutes,
  ...tagsRoutes,
  ...savedFiltersRoutes,
  ...macrosRoutes,
  ...cannedResponsesRoutes,
  ...routingRulesRoutes,
  ...ticketToolsRoutes,
  ...csatRoutes,
  ...pushRoutes,
  ...mailRoutes,
  ...reportsRoutes,
  ...extensionsRoutes,
  ...meetingsRoutes,
  ...kbRoutes,
  ...botsRoutes,
  ...webchatRoutes,
  ...channelsRoutes,
  ...webformsRoutes,
  ...rolesRoutes,
  ...brandingRoutes,
  ...ticketArchiverRoutes,
] as RouteDef[];

/** Routes that take a body of any media type as bytes (app.ts registers them with a catch-all parser). */
export const anyBodyRoutes: RouteDef[] = [
  ...extensionHookRoutes,
  ...channelWebhookRoutes,
] as RouteDef[];

/** Routes that take an HTML form post (app.ts registers them with the form parser). */
export const formRoutes: RouteDef[] = [
  ...csatFormRoutes,
  ...webformFormRoutes,
];
