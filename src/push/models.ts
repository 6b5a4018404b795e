import { TenantModel } from '../db/model.js';

/** A browser's push subscription (W3C Push API) of one staff user. */
export class PushSubscriptionRecord extends TenantModel {
  static override tableName = 'push_subscriptions';

  declare user_id: string;
  declare endpoint: string;
  declare p256dh: string;
  declare auth: string;
  declare created_at: Date;
}

/** One push to send: written in the change's transaction, sent after commit. */
export class PushMessage extends TenantModel {
  static override tableName = 'push_messages';
  static override jsonAttributes = ['payload'];

  declare subscription_id: string;
  declare payload: Record<string, unknown>;
  declare urgency: 'very-low' | 'low' | 'normal' | 'high';
  declare ttl_seconds: number;
  declare status: 'pending' | 'sent' | 'failed';
  declare attempts: number;
  declare next_attempt_at: Date;
  declare last_error: string | null;
  declare created_at: Date;
  declare sent_at: Date | null;
}
