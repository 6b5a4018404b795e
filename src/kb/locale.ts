/**
 * The PostgreSQL text search configuration of a locale: its language's stemmer and stop words
 * (configurations shipped with PostgreSQL 15 and later), `simple` for any other language.
 */
const CONFIGS: Record<string, string> = {
  ar: 'arabic', hy: 'armenian', eu: 'basque', ca: 'catalan', da: 'danish', nl: 'dutch', en: 'english', fi: 'finnish',
  fr: 'french', de: 'german', el: 'greek', hi: 'hindi', hu: 'hungarian', id: 'indonesian', ga: 'irish', it: 'italian',
  lt: 'lithuanian', ne: 'nepali', nb: 'norwegian', nn: 'norwegian', no: 'norwegian', pt: 'portuguese', ro: 'romanian',
  ru: 'russian', sr: 'serbian', es: 'spanish', sv: 'swedish', ta: 'tamil', tr: 'turkish', yi: 'yiddish',
};

export function textSearchConfig(locale: string | null | undefined): string {
  const language = (locale ?? 'en').split('-')[0]!.toLowerCase();
  return CONFIGS[language] ?? 'simple';
}

/** Locales are stored as sent, with the language lower-cased (`pt-BR`, `en`). */
export function normaliseLocale(locale: string | undefined): string {
  const [language, ...rest] = (locale ?? 'en').split('-');
  return [language!.toLowerCase(), ...rest].join('-');
}
