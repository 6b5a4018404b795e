import { escapeHtml } from './html.js';
import { brandCss, brandFooter, brandHeader, type BrandView } from '../branding/html.js';
import type { SurveyStrings } from './i18n.js';

/**
 * The survey page (GET/POST {site_url}/csat/<token>): plain server-rendered HTML, no script. A
 * radio group in a fieldset with a legend, real labels, a visible focus ring, the language on
 * <html>, a viewport for phones and a live status for the thank-you line, so it reads well with a
 * screen reader and on a small screen. The form posts back to the same URL with a form token
 * bound to the survey (see form-token.ts).
 */
export interface SurveyView {
  lang: string;
  strings: SurveyStrings;
  ticketNumber: number;
  subject: string;
  question: string;
  reasons: string[];
  commentEnabled: boolean;
  action: string;
  formToken: string;
  current: { score: number; comment: string | null; reason: string | null } | null;
  notice: 'thanks' | 'invalid' | null;
  /** The tenant's branding (src/branding): header, colours, footer. */
  brand?: BrandView;
}

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:1rem;background:#f6f7f9;color:#1b1f24;line-height:1.5}
main{max-width:34rem;margin:0 auto;background:#fff;border-radius:.5rem;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.35rem;margin:0 0 .25rem}p.ticket{color:#4a5360;margin:0 0 1rem}
fieldset{border:0;padding:0;margin:0 0 1rem}legend{font-weight:600;margin-bottom:.5rem}
.scores{display:flex;flex-wrap:wrap;gap:.5rem}.scores label{flex:1 1 5.5rem;border:1px solid #8a94a3;border-radius:.4rem;padding:.6rem;text-align:center;cursor:pointer;min-height:2.75rem}
.scores input{margin-right:.35rem}label.field{display:block;font-weight:600;margin:.75rem 0 .25rem}
select,textarea{width:100%;box-sizing:border-box;font:inherit;padding:.5rem;border:1px solid #8a94a3;border-radius:.4rem}
button{margin-top:1rem;font:inherit;font-weight:600;padding:.7rem 1.2rem;border:0;border-radius:.4rem;background:#0b57d0;color:#fff;min-height:2.75rem;cursor:pointer}
:focus-visible{outline:3px solid #f5a623;outline-offset:2px}.notice{padding:.75rem;border-radius:.4rem;margin-bottom:1rem}
.thanks{background:#e6f4ea;color:#0d5323}.invalid{background:#fdecea;color:#8a1c12}
`;

function layout(lang: string, title: string, body: string, brand?: BrandView): string {
  return `<!doctype html>
<html lang="${escapeHtml(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}${brand ? brandCss(brand) : ''}</style>
</head>
<body>
<main>
${brand ? brandHeader(brand) : ''}${body}${brand ? brandFooter(brand) : ''}
</main>
</body>
</html>
`;
}

export function renderSurveyPage(view: SurveyView): string {
  const s = view.strings;
  const current = view.current;
  const notice = view.notice === 'thanks'
    ? `<p class="notice thanks" role="status">${escapeHtml(s.thanks)}</p>`
    : view.notice === 'invalid' ? `<p class="notice invalid" role="alert">${escapeHtml(s.invalidForm)}</p>` : '';
  const scores = ([1, 2, 3, 4, 5] as const).map((n) =>
    `<label><input type="radio" name="score" value="${n}" required${current?.score === n ? ' checked' : ''}>${n} · ${escapeHtml(s.scores[n])}</label>`).join('\n');
  const reasons = view.reasons.length
    ? `<label class="field" for="reason">${escapeHtml(s.reasonLabel)}</label>
<select id="reason" name="reason">
<option value="">${escapeHtml(s.reasonNone)}</option>
${view.reasons.map((r) => `<option value="${escapeHtml(r)}"${current?.reason === r ? ' selected' : ''}>${escapeHtml(r)}</option>`).join('\n')}
</select>`
    : '';
  const comment = view.commentEnabled
    ? `<label class="field" for="comment">${escapeHtml(s.commentLabel)}</label>
<textarea id="comment" name="comment" rows="4" maxlength="2000">${escapeHtml(current?.comment ?? '')}</textarea>`
    : '';
  return layout(view.lang, s.title, `<h1>${escapeHtml(s.title)}</h1>
<p class="ticket">${escapeHtml(s.ticket(view.ticketNumber))}: ${escapeHtml(view.subject)}</p>
${notice}${current ? `<p>${escapeHtml(s.current(current.score))}</p>` : ''}
<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="form_token" value="${escapeHtml(view.formToken)}">
<fieldset>
<legend>${escapeHtml(view.question)}</legend>
<div class="scores">
${scores}
</div>
</fieldset>
${reasons}
${comment}
<button type="submit">${escapeHtml(s.submit)}</button>
</form>`, view.brand);
}

export function renderUnavailablePage(lang: string, strings: SurveyStrings): string {
  return layout(lang, strings.expiredTitle, `<h1>${escapeHtml(strings.expiredTitle)}</h1>
<p>${escapeHtml(strings.expired)}</p>`);
}
