import { escapeHtml } from '../csat/html.js';
import { brandCss, brandFooter, brandHeader, type BrandView } from '../branding/html.js';

/**
 * The public web form (GET {site_url}/forms/{id}): server-rendered HTML without script, real labels,
 * the form token in a hidden field, and a honeypot field hidden from people (and from screen
 * readers) that bots tend to fill. A tenant that has set its branding (src/branding) gets its
 * header, colours and footer, as on the CSAT page; an unbranded tenant's page stays plain.
 */
export interface FormView {
  title: string;
  fields: Array<{ name: string; label: string; type: 'text' | 'email' | 'textarea'; required: boolean }>;
  action: string;
  formToken: string;
  notice: { kind: 'thanks' | 'invalid'; text: string } | null;
  /** The tenant's branding, when it has set any. */
  brand?: BrandView;
}

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:1rem;background:#f6f7f9;color:#1b1f24;line-height:1.5}
main{max-width:34rem;margin:0 auto;background:#fff;border-radius:.5rem;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.35rem;margin:0 0 1rem}label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input,textarea{width:100%;box-sizing:border-box;font:inherit;padding:.5rem;border:1px solid #8a94a3;border-radius:.4rem}
textarea{min-height:8rem}button{margin-top:1rem;font:inherit;font-weight:600;padding:.7rem 1.2rem;border:0;border-radius:.4rem;background:#0b57d0;color:#fff;min-height:2.75rem;cursor:pointer}
:focus-visible{outline:3px solid #f5a623;outline-offset:2px}.notice{padding:.75rem;border-radius:.4rem;margin-bottom:1rem}
.thanks{background:#e6f4ea;color:#0d5323}.invalid{background:#fdecea;color:#8a1c12}.hp{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}
`;

export function renderFormPage(view: FormView): string {
  const fields = view.fields.map((f) => {
    const id = `f-${escapeHtml(f.name)}`;
    const attrs = `id="${id}" name="${escapeHtml(f.name)}"${f.required ? ' required' : ''}`;
    const control = f.type === 'textarea'
      ? `<textarea ${attrs} maxlength="20000"></textarea>`
      : `<input ${attrs} type="${f.type}" maxlength="${f.type === 'email' ? 254 : 500}"${f.type === 'email' ? ' autocomplete="email"' : ''}>`;
    return `<label for="${id}">${escapeHtml(f.label)}${f.required ? ' *' : ''}</label>\n${control}`;
  }).join('\n');
  const notice = view.notice ? `<p class="notice ${view.notice.kind}" role="status">${escapeHtml(view.notice.text)}</p>` : '';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(view.title)}</title><style>${STYLE}${view.brand ? brandCss(view.brand) : ''}</style></head>
<body><main>
${view.brand ? brandHeader(view.brand) : ''}<h1>${escapeHtml(view.title)}</h1>
${notice}
<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="form_token" value="${escapeHtml(view.formToken)}">
<div class="hp" aria-hidden="true"><label for="f-homepage">Leave this empty</label><input id="f-homepage" name="homepage" type="text" tabindex="-1" autocomplete="off"></div>
${fields}
<button type="submit">Send</button>
</form>
${view.brand ? brandFooter(view.brand) : ''}</main></body></html>`;
}
