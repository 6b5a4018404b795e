import type { Ctx } from '../../core/context.js';
import { recordEvent } from '../record.js';

/** The organization snapshot of `organization.created` / `organization.updated` (the spec's event table). */
export interface OrganizationSnapshot {
  id: string;
  name: string;
  primary_domain: string | null;
  domains: string[];
  website: string | null;
  notes: string | null;
  custom_fields: Record<string, unknown>;
  shares_tickets: boolean;
}

export async function emitOrganizationEvent(ctx: Ctx, type: 'organization.created' | 'organization.updated', snapshot: OrganizationSnapshot): Promise<void> {
  await recordEvent(ctx, { type, subjectType: 'organization', subjectId: snapshot.id, data: { ...snapshot } });
}
