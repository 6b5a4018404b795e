import type { Ctx } from '../../core/context.js';
import { recordEvent } from '../record.js';

/** The organization snapshot of `organization.created` / `organization.updated`. */
export interface OrganizationSnapshot {
  id: string;
  name: string;
  primary_domain: string | null;
  website: string | null;
  custom_fields: Record<string, unknown>;
}

export async function emitOrganizationEvent(ctx: Ctx, type: 'organization.created' | 'organization.updated', snapshot: OrganizationSnapshot): Promise<void> {
  await recordEvent(ctx, { type, subjectType: 'organization', subjectId: snapshot.id, data: { ...snapshot } });
}
