import type { Ctx } from '../core/context.js';
import { Priority, Status, type StatusCategory } from './models.js';

/**
 * The default vocabularies of CONTRACT §5, created with every tenant. The desk migration inserts the
 * same list for tenants that existed before it; keep the two in step.
 */
export const DEFAULT_STATUSES: ReadonlyArray<{ key: string; name: string; category: StatusCategory; pauses_sla: boolean }> = [
  { key: 'new', name: 'New', category: 'new', pauses_sla: false },
  { key: 'open', name: 'Open', category: 'open', pauses_sla: false },
  { key: 'pending', name: 'Pending', category: 'pending', pauses_sla: true },
  { key: 'waiting_on_vendor', name: 'Waiting on vendor', category: 'pending', pauses_sla: true },
  { key: 'resolved', name: 'Resolved', category: 'resolved', pauses_sla: false },
  { key: 'closed', name: 'Closed', category: 'closed', pauses_sla: false },
];

export const DEFAULT_PRIORITIES: ReadonlyArray<{ key: string; name: string }> = [
  { key: 'urgent', name: 'Urgent' },
  { key: 'high', name: 'High' },
  { key: 'normal', name: 'Normal' },
  { key: 'low', name: 'Low' },
];

/** Inserts the default statuses and priorities for ctx's (new) tenant. */
export async function createDefaultVocabularies(ctx: Ctx): Promise<void> {
  const stamps = { created_at: ctx.now, updated_at: ctx.now };
  for (const [i, s] of DEFAULT_STATUSES.entries()) await Status.insertIn(ctx, { ...s, position: i + 1, ...stamps });
  for (const [i, p] of DEFAULT_PRIORITIES.entries()) await Priority.insertIn(ctx, { ...p, position: i + 1, ...stamps });
}
