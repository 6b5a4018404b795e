import type { Ctx } from '../core/context.js';
import { recordEvent } from '../events/record.js';
import type { UserRow } from './user-store.js';

/** The customer snapshot of the spec's `customer.created` / `customer.updated` payloads. */
export function customerSnapshot(user: Pick<UserRow, 'id' | 'email' | 'name' | 'phone' | 'organization_id' | 'is_vip' | 'custom_fields'>) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    phone: user.phone,
    organization_id: user.organization_id,
    is_vip: user.is_vip,
    custom_fields: user.custom_fields,
  };
}

/**
 * Records that a customer was created (signup, staff intake, a ticket's `requester`, an inbound
 * message) or changed (contact details, VIP, organization link, custom fields). Staff users are
 * not customers: callers record only for role `customer`.
 */
export async function recordCustomerEvent(ctx: Ctx, type: 'customer.created' | 'customer.updated', user: UserRow): Promise<void> {
  await recordEvent(ctx, { type, subjectType: 'customer', subjectId: user.id, data: customerSnapshot(user) });
}
