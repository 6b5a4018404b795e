import { TenantModel } from '../db/model.js';

/** A tenant's outbound webhook endpoint (migrations/…_webhooks.ts). */
export class WebhookEndpoint extends TenantModel {
  static override tableName = 'webhook_endpoints';

  declare name: string;
  declare url: string;
  declare secret_enc: string;
  declare secret_last4: string;
  declare events: string[];
  declare headers: Record<string, string>;
  declare active: boolean;
  declare created_at: Date;
  declare updated_at: Date;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'dead';

/** One event to deliver to one endpoint: the outbox row and its delivery log entry. */
export class WebhookDelivery extends TenantModel {
  static override tableName = 'webhook_deliveries';

  declare endpoint_id: string;
  declare event_id: string;
  declare event: string;
  declare status: DeliveryStatus;
  declare attempt: number;
  declare attempt_id: string | null;
  declare next_attempt_at: Date | null;
  declare status_code: number | null;
  declare latency_ms: number | null;
  declare error: string | null;
  declare created_at: Date;
  declare updated_at: Date;
  declare delivered_at: Date | null;
}
