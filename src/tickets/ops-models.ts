import { TenantModel } from '../db/model.js';

/**
 * Records of the ticket operations (migrations/20261123121000_ticket_ops.ts). Kept apart from
 * models.ts, which holds the ticket and its conversation. Reply locks have no id of their own
 * (one per ticket) and are reached with `scoped(ctx, 'reply_locks')` in reply-lock.ts.
 */

/** A symmetric link, stored once as the ordered pair `ticket_a_id < ticket_b_id`. */
export class TicketLink extends TenantModel {
  static override tableName = 'ticket_links';

  declare ticket_a_id: string;
  declare ticket_b_id: string;
  declare created_by: string | null;
  declare created_at: Date;
}

/** A CC collaborator: a user of the tenant (`user_id`) or a bare email address (`email`, `name`). */
export class TicketCollaborator extends TenantModel {
  static override tableName = 'ticket_collaborators';

  declare ticket_id: string;
  declare user_id: string | null;
  declare email: string | null;
  declare name: string | null;
  declare added_by: string | null;
  declare created_at: Date;
}

export class TimeEntry extends TenantModel {
  static override tableName = 'time_entries';

  declare ticket_id: string;
  declare user_id: string;
  declare minutes: number;
  declare description: string | null;
  declare billable: boolean;
  /** A `date` column: pg hands it back as a Date at local midnight unless parsed; see time-entries.ts. */
  declare work_date: Date | string;
  declare created_at: Date;
  declare updated_at: Date;
}
