import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { scoped } from '../db/tenant-scope.js';
import { OrganizationRecord } from './models.js';

/**
 * Which organization an id or an e-mail address names, for the users' and the user store's
 * checks: apart from the organizations' service (which shows members as users), so that neither
 * imports the other.
 */

/** The organization of `field` in a body must exist in this tenant: 422 naming the field. */
export async function assertOrganizationExists(ctx: Ctx, id: string | null | undefined, field = 'organization_id'): Promise<void> {
  if (id == null) return;
  if (!(await OrganizationRecord.findIn(ctx, id))) throw errors.invalid(field, 'is not an organization of this tenant');
}

/** The organization whose domains hold the domain of `email`, if any (the automatic link). */
export async function organizationForEmail(ctx: Ctx, email: string): Promise<string | null> {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  if (!domain) return null;
  // organization_domains (kept by a trigger) answers by its primary key.
  const row = await scoped<{ organization_id: string }>(ctx, 'organization_domains').where('domain', domain).first('organization_id');
  return row?.organization_id ?? null;
}
