import { TenantModel } from '../db/model.js';

/** One survey: a token sent when a ticket entered the trigger category, and its rating once given. */
export class CsatSurvey extends TenantModel {
  static override tableName = 'csat_surveys';

  declare ticket_id: string;
  declare token_hash: string;
  declare token_encrypted: string;
  declare created_at: Date;
  declare expires_at: Date;
  declare score: number | null;
  declare comment: string | null;
  declare reason: string | null;
  declare submitted_at: Date | null;
}
