import { Model } from 'objection';
import { TenantModel, tenantJoin } from '../db/model.js';
import { Priority, Status, TicketType } from '../vocab/models.js';
import { OrganizationRecord, TeamRecord, UserRecord } from '../directory/models.js';

/**
 * The ticket desk's records (migrations/20261123120000_desk.ts). Relations join on the composite
 * key, so an eager load never crosses tenants; requester, assignee, team and organization are the
 * directory's models. Eager loads (`withGraphFetched`, and `withGraphJoined`'s metadata reads) issue
 * their queries side by side: use them on a read context (the pool), not inside a transaction,
 * where they would share one connection (the pg driver deprecates concurrent queries on a client).
 */

export type Channel = 'email' | 'webchat' | 'webform' | 'api' | 'messaging_a' | 'messaging_b' | 'messaging_c' | 'social_a' | 'social_b';
export const CHANNELS: readonly Channel[] = ['email', 'webchat', 'webform', 'api', 'messaging_a', 'messaging_b', 'messaging_c', 'social_a', 'social_b'];

export type SlaTargetStatus = 'active' | 'paused' | 'met' | 'breached' | 'none';
export interface SlaTarget { due_at: string | null; met_at: string | null; breached_at: string | null; status: SlaTargetStatus }
/** Maintained by the SLA engine; null until it has computed the ticket's targets. */
export interface TicketSla { paused: boolean; first_response: SlaTarget; next_response: SlaTarget; resolution: SlaTarget }

export class Ticket extends TenantModel {
  static override tableName = 'tickets';

  declare ticket_number: number;
  declare subject: string;
  declare status_id: string;
  declare priority_id: string;
  declare type_id: string | null;
  declare requester_id: string;
  declare assigned_agent_id: string | null;
  declare team_id: string | null;
  declare organization_id: string | null;
  declare channel: Channel;
  declare tags: string[];
  declare custom_fields: Record<string, unknown>;
  declare summary: string | null;
  declare resolution_code: string | null;
  declare sla: TicketSla | null;
  declare sla_due_at: Date | null;
  declare first_responded_at: Date | null;
  declare resolved_at: Date | null;
  declare closed_at: Date | null;
  declare snoozed_until: Date | null;
  declare merged_into_id: string | null;
  /** The latest CSAT rating `{score, comment, reason, submitted_at}`, written by the csat area. */
  declare csat: { score: number; comment: string | null; reason: string | null; submitted_at: string } | null;
  declare created_at: Date;
  declare updated_at: Date;

  declare status?: Status;
  declare priority?: Priority;
  declare type?: TicketType | null;
  declare requester?: UserRecord;
  declare assignee?: UserRecord | null;
  declare team?: TeamRecord | null;
  declare organization?: OrganizationRecord | null;
  declare messages?: Message[];

  static override get relationMappings() {
    return {
      status: { relation: Model.BelongsToOneRelation, modelClass: Status, join: tenantJoin('tickets', 'status_id', 'statuses') },
      priority: { relation: Model.BelongsToOneRelation, modelClass: Priority, join: tenantJoin('tickets', 'priority_id', 'priorities') },
      type: { relation: Model.BelongsToOneRelation, modelClass: TicketType, join: tenantJoin('tickets', 'type_id', 'ticket_types') },
      requester: { relation: Model.BelongsToOneRelation, modelClass: UserRecord, join: tenantJoin('tickets', 'requester_id', 'users') },
      assignee: { relation: Model.BelongsToOneRelation, modelClass: UserRecord, join: tenantJoin('tickets', 'assigned_agent_id', 'users') },
      team: { relation: Model.BelongsToOneRelation, modelClass: TeamRecord, join: tenantJoin('tickets', 'team_id', 'teams') },
      organization: { relation: Model.BelongsToOneRelation, modelClass: OrganizationRecord, join: tenantJoin('tickets', 'organization_id', 'organizations') },
      messages: { relation: Model.HasManyRelation, modelClass: Message, join: { from: ['tickets.tenant_id', 'tickets.id'], to: ['messages.tenant_id', 'messages.ticket_id'] } },
    };
  }
}

export class Message extends TenantModel {
  static override tableName = 'messages';

  declare ticket_id: string;
  declare body: string;
  declare body_html: string | null;
  declare is_private: boolean;
  declare author_id: string | null;
  declare author_name: string;
  declare is_agent: boolean;
  declare channel: Channel;
  /** Outbound channel delivery of a staff reply (src/channels), null elsewhere. */
  declare delivery: { status: 'pending' | 'sent' | 'failed'; error: string | null; external_id: string | null } | null;
  declare created_at: Date;

  declare ticket?: Ticket;
  declare attachments?: Attachment[];

  static override get relationMappings() {
    return {
      ticket: { relation: Model.BelongsToOneRelation, modelClass: Ticket, join: tenantJoin('messages', 'ticket_id', 'tickets') },
      attachments: { relation: Model.HasManyRelation, modelClass: Attachment, join: { from: ['messages.tenant_id', 'messages.id'], to: ['attachments.tenant_id', 'attachments.message_id'] } },
    };
  }
}

export class Attachment extends TenantModel {
  static override tableName = 'attachments';

  declare ticket_id: string | null;
  declare message_id: string | null;
  declare uploaded_by: string | null;
  declare filename: string;
  declare content_type: string;
  /** bigint: pg hands it back as a string unless parsed; read through Number(). */
  declare size: string | number;
  declare storage_key: string;
  declare sha256: string;
  declare created_at: Date;

  declare message?: Message | null;

  static override get relationMappings() {
    return {
      message: { relation: Model.BelongsToOneRelation, modelClass: Message, join: tenantJoin('attachments', 'message_id', 'messages') },
      ticket: { relation: Model.BelongsToOneRelation, modelClass: Ticket, join: tenantJoin('attachments', 'ticket_id', 'tickets') },
    };
  }
}
