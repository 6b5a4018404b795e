import type { Ctx } from '../core/context.js';
import { cachedConfig } from '../db/config-cache.js';
import { Priority, Status } from './models.js';

/**
 * The tenant's statuses and priorities as ticket writes read them (a create's default status and
 * priority, the SLA clock's status, a reply's reopening status): one read of each list per
 * configuration version and process, from the configuration cache, when the write pinned its
 * transaction's version (both tables bump it, migrations/20261127140000_config_versions.ts);
 * otherwise one read of the list. The rows are shared and frozen: plain objects, not models.
 */
export type StatusRow = Pick<Status, 'id' | 'tenant_id' | 'key' | 'name' | 'category' | 'pauses_sla' | 'position'>;
export type PriorityRow = Pick<Priority, 'id' | 'tenant_id' | 'key' | 'name' | 'position'>;

const plain = <T extends object>(row: T): T => ({ ...row });

/** Every status, by position. */
export function statusList(ctx: Ctx): Promise<readonly StatusRow[]> {
  return cachedConfig(ctx, 'vocab:statuses', async () =>
    (await Status.scoped(ctx).orderBy([{ column: 'position' }, { column: 'id' }])).map(plain));
}

/** Every priority, by position. */
export function priorityList(ctx: Ctx): Promise<readonly PriorityRow[]> {
  return cachedConfig(ctx, 'vocab:priorities', async () =>
    (await Priority.scoped(ctx).orderBy([{ column: 'position' }, { column: 'id' }])).map(plain));
}

export const statusById = async (ctx: Ctx, id: string) => (await statusList(ctx)).find((s) => s.id === id);
export const statusByKey = async (ctx: Ctx, key: string) => (await statusList(ctx)).find((s) => s.key === key);
export const priorityById = async (ctx: Ctx, id: string) => (await priorityList(ctx)).find((p) => p.id === id);
export const priorityByKey = async (ctx: Ctx, key: string) => (await priorityList(ctx)).find((p) => p.key === key);

/** The status a reply reopens a ticket to, and the SLA clock resumes at: `open`, else the first of its category. */
export async function openStatus(ctx: Ctx): Promise<StatusRow | undefined> {
  const statuses = await statusList(ctx);
  return statuses.find((s) => s.key === 'open') ?? statuses.find((s) => s.category === 'open');
}
