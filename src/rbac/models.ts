import { TenantModel } from '../db/model.js';
import type { Permissions } from './permissions.js';

/** A tenant's custom role: a named permission matrix (CONTRACT §19). */
export class RoleRecord extends TenantModel {
  static override tableName = 'roles';
  static override jsonAttributes = ['permissions'];
  declare name: string;
  declare description: string;
  declare permissions: Permissions;
  declare created_at: Date;
  declare updated_at: Date;
}
