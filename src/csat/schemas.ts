import { Type, type Static } from '@sinclair/typebox';

/** CSAT shapes (CONTRACT §14). */
const Reason = Type.String({ minLength: 1, maxLength: 200 });

export const CsatSettings = Type.Object({
  enabled: Type.Boolean(),
  trigger: Type.Union([Type.Literal('resolved'), Type.Literal('closed')]),
  question: Type.String(),
  comment_enabled: Type.Boolean(),
  reasons: Type.Array(Type.String()),
}, { $id: 'CsatSettings' });
export type CsatSettings = Static<typeof CsatSettings>;

export const CsatSettingsPatch = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  trigger: Type.Optional(Type.Union([Type.Literal('resolved'), Type.Literal('closed')])),
  question: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  comment_enabled: Type.Optional(Type.Boolean()),
  reasons: Type.Optional(Type.Array(Reason, { maxItems: 20 })),
}, { $id: 'CsatSettingsPatch', additionalProperties: false });
export type CsatSettingsPatch = Static<typeof CsatSettingsPatch>;

export const COMMENT_MAX = 2000;

export const CsatSubmit = Type.Object({
  score: Type.Integer({ minimum: 1, maximum: 5 }),
  comment: Type.Optional(Type.Union([Type.String({ maxLength: COMMENT_MAX }), Type.Null()])),
  reason: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
}, { $id: 'CsatSubmit', additionalProperties: false });
export type CsatSubmit = Static<typeof CsatSubmit>;

export const CsatAnswer = Type.Object({
  ticket_id: Type.String(),
  score: Type.Integer(),
  comment: Type.Union([Type.String(), Type.Null()]),
  reason: Type.Union([Type.String(), Type.Null()]),
  submitted_at: Type.String(),
}, { $id: 'CsatAnswer' });
export type CsatAnswer = Static<typeof CsatAnswer>;

export const TokenParams = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 100 }),
}, { additionalProperties: false });

/** One-click score from the mail (`?score=N`). */
export const SurveyPageQuery = Type.Object({
  score: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
}, { additionalProperties: false });

/** The survey page's form post (application/x-www-form-urlencoded, all values strings). */
export const SurveyForm = Type.Object({
  score: Type.String({ pattern: '^[1-5]$', maxLength: 1 }),
  comment: Type.Optional(Type.String({ maxLength: COMMENT_MAX })),
  reason: Type.Optional(Type.String({ maxLength: 200 })),
  form_token: Type.String({ minLength: 1, maxLength: 100 }),
}, { $id: 'CsatSurveyForm', additionalProperties: false });
export type SurveyForm = Static<typeof SurveyForm>;
