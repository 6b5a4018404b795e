import { TenantModel } from '../db/model.js';
import type { LicensePayload } from './license.js';

/** An installed licence: the verified payload, the text as applied, who installed it and when. */
export class LicenseRecord extends TenantModel implements LicensePayload {
  static override tableName = 'licenses';
  declare license_id: string;
  declare customer: string;
  declare edition: LicensePayload['edition'];
  declare modules: string[];
  declare seats: number | null;
  declare issued_at: Date;
  declare expires_at: Date | null;
  declare raw: string;
  declare installed_by: string | null;
  declare installed_at: Date;
}
