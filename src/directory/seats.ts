import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { UserRecord } from './models.js';
import { entitlements } from '../licensing/features.js';
import { recordAudit } from '../audit/service.js';

/**
 * Agent seats (SPEC "Limits"): active agents and admins are bounded by the licence's seats and by
 * the tenant's seat quota, whichever is lower; either may be absent (null = no bound). Every change
 * that can take a seat calls `assertSeatAvailable` inside its transaction, which locks the tenant
 * row first so two concurrent promotions cannot both see the last seat as free.
 */
export interface SeatUsage {
  used: number;
  licensed: number | null;
  quota: number | null;
  limit: number | null;
  available: number | null;
}

async function countSeatsUsed(ctx: Ctx): Promise<number> {
  const count = await UserRecord.scoped(ctx).whereIn('role', ['admin', 'agent']).where('active', true).resultSize();
  return count;
}

async function tenantQuota(ctx: Ctx, lock: boolean): Promise<number | null> {
  const query = ctx.trx('tenants').where({ id: ctx.tenantId }).first('seat_quota');
  if (lock) query.forUpdate();
  const row = (await query) as { seat_quota: number | null } | undefined;
  return row?.seat_quota ?? null;
}

async function usage(ctx: Ctx, lock: boolean): Promise<SeatUsage> {
  // The lock comes first: the count after it sees every seat taken by transactions that held it.
  const quota = await tenantQuota(ctx, lock);
  const [used, ent] = await Promise.all([countSeatsUsed(ctx), entitlements(ctx)]);
  const bounds = [ent.seats, quota].filter((v): v is number => v !== null);
  const limit = bounds.length ? Math.min(...bounds) : null;
  return { used, licensed: ent.seats, quota, limit, available: limit === null ? null : Math.max(0, limit - used) };
}

export function seatUsage(ctx: Ctx): Promise<SeatUsage> {
  return usage(ctx, false);
}

/** Refuses with 409 when no agent seat is free; call before the change that takes the seat. */
export async function assertSeatAvailable(ctx: Ctx): Promise<void> {
  const seats = await usage(ctx, true);
  if (seats.limit !== null && seats.used >= seats.limit) {
    throw errors.conflict('No agent seat available', { reason: 'seat_limit_reached', limit: seats.limit, used: seats.used });
  }
}

/** Locks the tenant row: serialises changes that count staff (seats, the last active admin). */
export async function lockTenant(ctx: Ctx): Promise<void> {
  await tenantQuota(ctx, true);
}

export async function seatQuota(ctx: Ctx): Promise<{ quota: number | null }> {
  return { quota: await tenantQuota(ctx, false) };
}

/** Sets the tenant's seat quota. Lowering it below current use is allowed: it blocks new seats only. */
export async function setSeatQuota(ctx: Ctx, quota: number | null): Promise<{ quota: number | null }> {
  const before = await tenantQuota(ctx, true);
  if (before !== quota) {
    await ctx.trx('tenants').where({ id: ctx.tenantId }).update({ seat_quota: quota, updated_at: ctx.now });
    await recordAudit(ctx, {
      action: 'tenant.seat_quota_updated',
      resourceType: 'tenant',
      resourceId: ctx.tenantId,
      changes: { seat_quota: { from: before, to: quota } },
    });
  }
  return { quota };
}
