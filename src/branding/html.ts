import { escapeHtml } from '../csat/html.js';
import type { BrandingOut } from './schemas.js';

/**
 * Branding as markup, shared by the pages (CSAT, web forms) and notification mail. Colours are
 * validated hex values and the footer was sanitised when it was saved; everything else is escaped.
 */
export type BrandView = Pick<BrandingOut, 'name' | 'logo_url' | 'primary_color' | 'accent_color' | 'footer_html'>;

/** CSS overriding a page's default colours (buttons, focus ring, header rule). */
export function brandCss(b: BrandView): string {
  return `button{background:${b.primary_color}}:focus-visible{outline-color:${b.accent_color}}header.brand{border-bottom:3px solid ${b.accent_color};margin:0 0 1rem;padding:0 0 .5rem;display:flex;align-items:center;gap:.6rem}header.brand img{max-height:2.5rem;max-width:10rem}header.brand span{font-weight:600;color:${b.primary_color}}footer.brand{margin-top:1.25rem;font-size:.85rem;color:#4a5360}`;
}

export function brandHeader(b: BrandView): string {
  const logo = b.logo_url ? `<img src="${escapeHtml(b.logo_url)}" alt="">` : '';
  return `<header class="brand">${logo}<span>${escapeHtml(b.name)}</span></header>`;
}

export function brandFooter(b: BrandView): string {
  return b.footer_html ? `<footer class="brand">${b.footer_html}</footer>` : '';
}

/** A notification's HTML body inside the tenant's header and footer (inline styles: mail clients drop <style>). */
export function brandMailHtml(b: BrandView, bodyHtml: string): string {
  const logo = b.logo_url ? `<img src="${escapeHtml(b.logo_url)}" alt="" style="max-height:40px;max-width:160px;vertical-align:middle;margin-right:8px">` : '';
  const header = `<div style="border-bottom:3px solid ${b.accent_color};padding-bottom:6px;margin-bottom:12px">${logo}<strong style="color:${b.primary_color}">${escapeHtml(b.name)}</strong></div>`;
  const footer = b.footer_html ? `\n<div style="margin-top:16px;font-size:12px;color:#5f6368">${b.footer_html}</div>` : '';
  return `${header}\n${bodyHtml}${footer}`;
}
