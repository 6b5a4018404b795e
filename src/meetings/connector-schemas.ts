import { Type, type Static } from '@sinclair/typebox';
import { HttpUrl } from '../core/schema-types.js';

/** Connector shapes (SPEC "Meeting rules" 6; not shown in the spec: decided in docs/meetings.md). */
export const ProviderParams = Type.Object({
  provider: Type.Union(['video_a', 'video_b', 'video_c', 'calendar_a', 'calendar_b'].map((p) => Type.Literal(p))),
});
export const CalendarProviderParams = Type.Object({ provider: Type.Union([Type.Literal('calendar_a'), Type.Literal('calendar_b')]) });

export const ConnectorPut = Type.Object({
  client_id: Type.String({ minLength: 1, maxLength: 500 }),
  client_secret: Type.String({ minLength: 1, maxLength: 2000 }),
  base_url: HttpUrl({ maxLength: 2000 }),
}, { $id: 'ConnectorPut', additionalProperties: false });
export type ConnectorPut = Static<typeof ConnectorPut>;

export const ConnectorOut = Type.Object({
  provider: Type.String(), client_id: Type.String(), client_secret: Type.String(), base_url: Type.String(),
  created_at: Type.String(), updated_at: Type.String(),
}, { $id: 'Connector' });
export type ConnectorOut = Static<typeof ConnectorOut>;
export const ConnectorList = Type.Object({ data: Type.Array(ConnectorOut) }, { $id: 'ConnectorList' });

export const AuthorizeAnswer = Type.Object({ authorize_url: Type.String(), state: Type.String() }, { $id: 'ConnectorAuthorize' });
export const ConnectBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 2000 }),
  state: Type.String({ minLength: 1, maxLength: 200 }),
}, { $id: 'ConnectorConnect', additionalProperties: false });

export const ConnectedAccount = Type.Object({
  provider: Type.String(), connected: Type.Boolean(),
  expires_at: Type.Union([Type.String(), Type.Null()]), subscription_expires_at: Type.Union([Type.String(), Type.Null()]),
}, { $id: 'ConnectorAccount' });
export type ConnectedAccount = Static<typeof ConnectedAccount>;
export const ConnectedAccountList = Type.Object({ data: Type.Array(ConnectedAccount) }, { $id: 'ConnectorAccountList' });

/** The body of an inbound calendar notification: vendors send more; we read what verifies it. */
export const CalendarWebhookBody = Type.Object({
  value: Type.Optional(Type.Array(Type.Object({
    subscriptionId: Type.Optional(Type.String({ maxLength: 500 })),
    clientState: Type.Optional(Type.String({ maxLength: 500 })),
  }), { maxItems: 100 })),
});
export const CalendarWebhookQuery = Type.Object({ validationToken: Type.Optional(Type.String({ maxLength: 1000 })) });
export const CalendarWebhookAnswer = Type.Object({ accepted: Type.Integer() }, { $id: 'CalendarWebhookAnswer' });
