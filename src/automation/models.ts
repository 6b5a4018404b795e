import { TenantModel } from '../db/model.js';
import type { Condition } from '../tickets/conditions.js';

/** The automation area's records (migrations/20261123150000_automation.ts). */

/** A catalogued tag: a colour for a name tickets carry (names trimmed and lowercased). */
export class TagRecord extends TenantModel {
  static override tableName = 'tags';
  declare name: string;
  declare color: string;
  declare created_at: Date;
  declare updated_at: Date;
}

/** An agent's own view of the ticket list. */
export class SavedFilterRecord extends TenantModel {
  static override tableName = 'saved_filters';
  static override jsonAttributes = ['conditions'];
  declare owner_id: string;
  declare name: string;
  declare conditions: Condition[];
  declare created_at: Date;
  declare updated_at: Date;
}

export interface ActionItem { type: string; value: unknown }

export class MacroRecord extends TenantModel {
  static override tableName = 'macros';
  static override jsonAttributes = ['actions'];
  declare name: string;
  declare actions: ActionItem[];
  declare created_at: Date;
  declare updated_at: Date;
}

export class CannedResponseRecord extends TenantModel {
  static override tableName = 'canned_responses';
  declare title: string;
  declare shortcut: string;
  declare body: string;
  declare created_at: Date;
  declare updated_at: Date;
}

export type RoutingTrigger = 'ticket_created' | 'ticket_updated' | 'time_trigger';
export const ROUTING_TRIGGERS: readonly RoutingTrigger[] = ['ticket_created', 'ticket_updated', 'time_trigger'];

export class RoutingRuleRecord extends TenantModel {
  static override tableName = 'routing_rules';
  static override jsonAttributes = ['conditions', 'actions'];
  declare name: string;
  declare conditions: Condition[];
  declare actions: ActionItem[];
  declare position: number;
  declare active: boolean;
  declare triggers: RoutingTrigger[];
  declare created_at: Date;
  declare updated_at: Date;
}
