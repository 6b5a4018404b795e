/**
 * The survey page's own words in each shipped language; the customer's `locale` picks one
 * (`de-AT` → `de`), falling back to English. The tenant's question and reasons are shown as the
 * tenant wrote them, except the default question, which is translated too.
 */
export interface SurveyStrings {
  title: string;
  defaultQuestion: string;
  scores: Record<1 | 2 | 3 | 4 | 5, string>;
  scoreLegend: string;
  reasonLabel: string;
  reasonNone: string;
  commentLabel: string;
  submit: string;
  thanks: string;
  current: (score: number) => string;
  ticket: (number: number) => string;
  expiredTitle: string;
  expired: string;
  invalidForm: string;
}

const en: SurveyStrings = {
  title: 'Rate our support',
  defaultQuestion: 'How would you rate the support you received?',
  scores: { 1: 'Very poor', 2: 'Poor', 3: 'Okay', 4: 'Good', 5: 'Excellent' },
  scoreLegend: 'Your rating',
  reasonLabel: 'What mattered most?',
  reasonNone: 'No answer',
  commentLabel: 'Anything you would like to add? (optional)',
  submit: 'Send rating',
  thanks: 'Thank you! Your rating has been recorded. You can change it below.',
  current: (score) => `Your current rating: ${score} of 5`,
  ticket: (number) => `Ticket #${number}`,
  expiredTitle: 'Survey not available',
  expired: 'This survey link is unknown or has expired. Survey links are valid for 30 days.',
  invalidForm: 'The form could not be accepted. Please choose a rating and send it again.',
};

const de: SurveyStrings = {
  title: 'Bewerten Sie unseren Support',
  defaultQuestion: 'Wie zufrieden waren Sie mit unserem Support?',
  scores: { 1: 'Sehr schlecht', 2: 'Schlecht', 3: 'In Ordnung', 4: 'Gut', 5: 'Hervorragend' },
  scoreLegend: 'Ihre Bewertung',
  reasonLabel: 'Was war für Sie am wichtigsten?',
  reasonNone: 'Keine Angabe',
  commentLabel: 'Möchten Sie noch etwas hinzufügen? (optional)',
  submit: 'Bewertung senden',
  thanks: 'Vielen Dank! Ihre Bewertung wurde gespeichert. Sie können sie unten ändern.',
  current: (score) => `Ihre aktuelle Bewertung: ${score} von 5`,
  ticket: (number) => `Ticket #${number}`,
  expiredTitle: 'Umfrage nicht verfügbar',
  expired: 'Dieser Umfragelink ist unbekannt oder abgelaufen. Umfragelinks sind 30 Tage gültig.',
  invalidForm: 'Das Formular konnte nicht angenommen werden. Bitte wählen Sie eine Bewertung und senden Sie sie erneut.',
};

const LANGUAGES: Record<string, SurveyStrings> = { en, de };

export function surveyLanguage(locale: string | null | undefined): { lang: string; strings: SurveyStrings } {
  const lang = (locale ?? 'en').toLowerCase().split(/[-_]/)[0]!;
  return LANGUAGES[lang] ? { lang, strings: LANGUAGES[lang]! } : { lang: 'en', strings: en };
}

/** Picks the language from an Accept-Language header (for pages shown without a known survey). */
export function languageFromHeader(header: string | undefined): string | null {
  for (const part of (header ?? '').split(',')) {
    const tag = part.split(';')[0]!.trim().toLowerCase().split('-')[0]!;
    if (LANGUAGES[tag]) return tag;
  }
  return null;
}
