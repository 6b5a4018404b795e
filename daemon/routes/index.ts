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
import { mailRoutes } from './mail.js';

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
  ...mailRoutes,
] as RouteDef[];
