import { TenantModel } from '../db/model.js';
import type { Manifest } from './manifest.js';

/** An installed extension (migrations/…_extensions.ts). */
export class Extension extends TenantModel {
  static override tableName = 'extensions';
  static override jsonAttributes = ['manifest', 'config'];

  declare name: string;
  declare version: string;
  declare kind: string;
  declare description: string;
  declare author: string;
  declare enabled: boolean;
  declare manifest: Manifest;
  declare module_sha256: string;
  declare module_size: number;
  /** Plain values of text config fields. */
  declare config: Record<string, string>;
  /** Encrypted JSON object of the password-typed values. */
  declare secrets_enc: string | null;
  declare hook_token_hash: string | null;
  declare hook_token_enc: string | null;
  declare created_at: Date;
  declare updated_at: Date;
}

/** A ticket bound to one external record of one extension. */
export class ExtensionLink extends TenantModel {
  static override tableName = 'extension_links';
  static override get idColumn(): string[] {
    return ['tenant_id', 'ticket_id', 'extension_id'];
  }

  declare ticket_id: string;
  declare extension_id: string;
  declare external_id: string;
  declare created_at: Date;
}

/** A team's chat channel in one chat extension (chat-ops routes). */
export class ChatRoute extends TenantModel {
  static override tableName = 'chat_routes';
  static override get idColumn(): string[] {
    return ['tenant_id', 'extension_id', 'team_id'];
  }

  declare extension_id: string;
  declare team_id: string;
  declare channel_id: string;
  declare channel_name: string;
  declare created_at: Date;
  declare updated_at: Date;
}

/** The chat thread a ticket has (one per ticket). */
export class ChatThread extends TenantModel {
  static override tableName = 'chat_threads';
  static override get idColumn(): string[] {
    return ['tenant_id', 'ticket_id'];
  }

  declare ticket_id: string;
  declare extension_id: string;
  declare channel_id: string;
  declare thread_id: string;
  declare url: string | null;
  declare created_by: string | null;
  declare created_at: Date;
}

/** A note written into a ticket's chat thread from the desk. */
export class ThreadNote extends TenantModel {
  static override tableName = 'thread_notes';

  declare ticket_id: string;
  declare author_id: string | null;
  declare author_name: string;
  declare body: string;
  declare external_id: string | null;
  declare created_at: Date;
}
