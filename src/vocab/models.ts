import { TenantModel } from '../db/model.js';

/** The tenant's ticket vocabularies (migrations/20261123120000_desk.ts). */

export type StatusCategory = 'new' | 'open' | 'pending' | 'resolved' | 'closed';
export const STATUS_CATEGORIES: readonly StatusCategory[] = ['new', 'open', 'pending', 'resolved', 'closed'];

export class Status extends TenantModel {
  static override tableName = 'statuses';

  declare key: string;
  declare name: string;
  declare category: StatusCategory;
  declare pauses_sla: boolean;
  declare position: number;
  declare created_at: Date;
  declare updated_at: Date;
}

export class Priority extends TenantModel {
  static override tableName = 'priorities';

  declare key: string;
  declare name: string;
  declare position: number;
  declare created_at: Date;
  declare updated_at: Date;
}

export class TicketType extends TenantModel {
  static override tableName = 'ticket_types';

  declare name: string;
  declare description: string | null;
  declare active: boolean;
  declare position: number;
  declare created_at: Date;
  declare updated_at: Date;
}

export type CustomFieldKind = 'text' | 'select' | 'bool' | 'date';
export const CUSTOM_FIELD_KINDS: readonly CustomFieldKind[] = ['text', 'select', 'bool', 'date'];

export class CustomField extends TenantModel {
  static override tableName = 'custom_fields';

  declare key: string;
  declare label: string;
  declare kind: CustomFieldKind;
  declare options: string[];
  declare required: boolean;
  declare active: boolean;
  declare position: number;
  declare created_at: Date;
  declare updated_at: Date;
}
