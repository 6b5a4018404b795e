/**
 * The one rule for text entering the system. PostgreSQL refuses the NUL character in text and
 * jsonb, and jsonb refuses a lone UTF-16 surrogate (`"\ud800"` parses in JSON, but is no Unicode
 * character); other C0 control characters (except tab, line feed, carriage return) have no place
 * in helpdesk data and only hide content. Such input is refused, never silently altered.
 */
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;
const LONE_SURROGATE = /\p{Cs}/u;

/** Why `value` is not acceptable text, or null when it is. */
export function textProblem(value: string): string | null {
  if (CONTROL.test(value)) return 'must not contain control characters (such as NUL)';
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode (it contains a lone surrogate)';
  return null;
}

/** `value` without the characters textProblem refuses: for text we store but do not ask for (User-Agent). */
export function cleanText(value: string): string {
  return value.replace(new RegExp(CONTROL.source, 'g'), '').replace(new RegExp(LONE_SURROGATE.source, 'gu'), '\uFFFD');
}
