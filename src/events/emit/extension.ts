import type { Ctx } from '../../core/context.js';
import { recordEvent } from '../record.js';

/** Extension lifecycle: installed, uninstalled, enabled or disabled by an admin. */
export type ExtensionEventType = 'extension.installed' | 'extension.uninstalled' | 'extension.enabled' | 'extension.disabled';

export interface ExtensionPayload {
  extension_id: string;
  name: string;
  kind: string;
}

export async function emitExtensionEvent(ctx: Ctx, type: ExtensionEventType, payload: ExtensionPayload): Promise<void> {
  await recordEvent(ctx, { type, subjectType: 'extension', subjectId: payload.extension_id, data: { ...payload } });
}
