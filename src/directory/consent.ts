import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { toRfc3339 } from '../core/clock.js';
import { paginatePage, type Page, type PageInput } from '../core/pagination.js';
import { recordAudit } from '../audit/service.js';
import { ConsentRecord, UserRecord } from './models.js';
import type { Consent, ConsentPut } from './schemas.js';

/**
 * Channel consent of customers (SPEC: GET/PUT /customers/{id}/consent). Consent is evidence, so it
 * is a history: every PUT appends who recorded which answer for which channel, and when; the
 * newest record of a channel is the one in force. Staff users are not customers here (404).
 */
function consentOut(row: ConsentRecord): Consent {
  return {
    id: row.id,
    customer_id: row.user_id,
    channel: row.channel as Consent['channel'],
    consent_status: row.consent_status,
    notes: row.notes,
    recorded_by: row.recorded_by,
    created_at: toRfc3339(row.created_at)!,
  };
}

async function loadCustomer(ctx: Ctx, id: string): Promise<UserRecord> {
  const user = await UserRecord.findIn(ctx, id);
  if (!user || user.role !== 'customer') throw errors.notFound('customer', id);
  return user;
}

/** The customer's consent records, newest first. */
export async function listConsent(ctx: Ctx, customerId: string, query: PageInput): Promise<Page<Consent>> {
  await loadCustomer(ctx, customerId);
  const qb = ConsentRecord.scoped(ctx).where('consent_records.user_id', customerId)
    .orderBy('consent_records.created_at', 'desc').orderBy('consent_records.id', 'desc');
  return paginatePage<ConsentRecord, Consent>(query, qb, consentOut);
}

export async function recordConsent(ctx: Ctx, customerId: string, input: ConsentPut): Promise<Consent> {
  await loadCustomer(ctx, customerId);
  const row = await ConsentRecord.insertIn(ctx, {
    user_id: customerId,
    channel: input.channel ?? 'all',
    consent_status: input.consent_status,
    notes: input.notes?.trim() || null,
    recorded_by: ctx.actor.userId,
    created_at: ctx.now,
  });
  await recordAudit(ctx, { action: 'customer.consent_recorded', resourceType: 'user', resourceId: customerId, changes: { channel: row.channel, consent_status: row.consent_status } });
  return consentOut(row);
}
