import sanitizeHtml from 'sanitize-html';
import type { Ctx } from '../core/context.js';
import { isUuid } from '../core/ids.js';
import { API_PATH } from './urls.js';
import { Attachment, type Message } from '../tickets/models.js';
import type { AttachmentSummary } from './schemas.js';

export function attachmentSummary(row: Attachment): AttachmentSummary {
  return { id: row.id, filename: row.filename, content_type: row.content_type, size: Number(row.size) };
}

/** The `src` of every image in sanitised HTML (collected by the sanitiser's own parser). */
function imageSources(html: string): string[] {
  const sources: string[] = [];
  sanitizeHtml(html, {
    allowedTags: ['img'],
    allowedAttributes: { img: ['src'] },
    transformTags: {
      img: (tagName, attribs) => {
        if (attribs.src) sources.push(attribs.src);
        return { tagName, attribs };
      },
    },
  });
  return sources;
}

/** The attachment id an image URL of this API names (`…/api/v1/attachments/<id>`), if any. */
function attachmentIdOf(src: string, siteUrl: string): string | null {
  let url: URL;
  try {
    url = new URL(src, siteUrl);
  } catch {
    return null;
  }
  if (url.origin !== new URL(siteUrl).origin) return null;
  const prefix = `${API_PATH}/attachments/`;
  if (!url.pathname.startsWith(prefix)) return null;
  const id = url.pathname.slice(prefix.length);
  return isUuid(id) ? id : null;
}

/**
 * Inline images (POST /inline-images) that a message's HTML shows become that message's
 * attachments, so they follow its visibility: a customer may then load the image of a public
 * reply. Only the uploader's own, not yet adopted images are taken.
 */
export async function adoptInlineImages(ctx: Ctx, message: Message, html: string): Promise<Attachment[]> {
  if (!message.author_id) return [];
  const ids = [...new Set(imageSources(html).map((src) => attachmentIdOf(src, ctx.deps.config.siteUrl)).filter((id): id is string => !!id))];
  if (!ids.length) return [];
  return await Attachment.scoped(ctx)
    .whereIn('attachments.id', ids.slice(0, 100))
    .whereNull('attachments.message_id')
    .whereNull('attachments.ticket_id')
    .where('attachments.uploaded_by', message.author_id)
    .patch({ message_id: message.id, ticket_id: message.ticket_id } as never)
    .returning('*') as unknown as Attachment[];
}
