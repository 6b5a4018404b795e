/** Where the API lives under the site URL (daemon/route.ts API_PREFIX says the same for routes). */
export const API_PATH = '/api/v1';

/** The download URL of an attachment, as inline images are embedded in message HTML. */
export function attachmentUrl(siteUrl: string, id: string): string {
  return `${siteUrl}${API_PATH}/attachments/${id}`;
}
