import { Type, type Static } from '@sinclair/typebox';

/** Web push and notification preference shapes (CONTRACT §14). */
const Base64url = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: '^[A-Za-z0-9_-]+={0,2}$' });

export const VapidPublicKey = Type.Object({ public_key: Type.String() }, { $id: 'VapidPublicKey' });

export const PushSubscriptionCreate = Type.Object({
  endpoint: Type.String({ minLength: 1, maxLength: 2048 }),
  keys: Type.Object({
    p256dh: Base64url(100),
    auth: Base64url(50),
  }, { additionalProperties: false }),
  // Browsers' PushSubscription.toJSON() carries this; accepted and ignored.
  expirationTime: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1e15 }), Type.Null()])),
}, { $id: 'PushSubscriptionCreate', additionalProperties: false });
export type PushSubscriptionCreate = Static<typeof PushSubscriptionCreate>;

export const PushSubscriptionOut = Type.Object({
  id: Type.String(),
  endpoint: Type.String(),
  created_at: Type.String(),
}, { $id: 'PushSubscription' });
export type PushSubscriptionOut = Static<typeof PushSubscriptionOut>;

export const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Day = (typeof DAYS)[number];

const Clock = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', maxLength: 5, description: 'HH:MM, 24-hour, in the user\'s timezone' });

export const ActiveWindow = Type.Object({
  start: Clock,
  end: Clock,
  days: Type.Array(Type.Union(DAYS.map((d) => Type.Literal(d))), { minItems: 1, maxItems: 7, description: 'Stored once each, in week order' }),
}, { additionalProperties: false, description: 'When pushes may arrive; an end before the start runs past midnight' });

export const NotificationPreferences = Type.Object({
  email: Type.Boolean(),
  push: Type.Boolean(),
  active_window: Type.Union([ActiveWindow, Type.Null()]),
}, { $id: 'NotificationPreferences', additionalProperties: false });
export type NotificationPreferences = Static<typeof NotificationPreferences>;

export const NotificationPreferencesPatch = Type.Object({
  email: Type.Optional(Type.Boolean()),
  push: Type.Optional(Type.Boolean()),
  active_window: Type.Optional(Type.Union([ActiveWindow, Type.Null()])),
}, { additionalProperties: false });
export type NotificationPreferencesPatch = Static<typeof NotificationPreferencesPatch>;

export const DEFAULT_PREFERENCES: NotificationPreferences = { email: true, push: true, active_window: null };
