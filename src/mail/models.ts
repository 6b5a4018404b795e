import { TenantModel } from '../db/model.js';

/** The mail channel's records (migrations/20261123160000_mail.ts); mail_settings is settings-store.ts. */

export class TemplateOverride extends TenantModel {
  static override tableName = 'notification_templates';

  declare identifier: string;
  declare locale: string;
  declare subject: string;
  declare body_html: string;
  declare created_at: Date;
  declare updated_at: Date;
}

export type NotificationStatus = 'pending' | 'sent' | 'failed';

export class NotificationRecord extends TenantModel {
  static override tableName = 'notifications';

  declare identifier: string;
  declare event_id: string;
  declare ticket_id: string | null;
  declare recipient_id: string | null;
  declare to_address: string;
  declare subject: string;
  declare body_html: string;
  declare body_text: string;
  declare message_id: string;
  declare in_reply_to: string | null;
  declare references: string[];
  declare status: NotificationStatus;
  declare attempts: number;
  declare next_attempt_at: Date | null;
  declare last_error: string | null;
  declare created_at: Date;
  declare sent_at: Date | null;
  /** A meeting invitation's calendar part (METHOD and the VCALENDAR text), else null. */
  declare ical_method: 'REQUEST' | 'CANCEL' | null;
  declare ical_content: string | null;
}

export class MailMessageId extends TenantModel {
  static override tableName = 'mail_message_ids';

  declare direction: 'in' | 'out';
  declare message_id: string;
  declare ticket_id: string | null;
  declare from_address: string | null;
  declare created_at: Date;
}
