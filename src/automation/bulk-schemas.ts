import { Type, type Static } from '@sinclair/typebox';
import { NonBlank, Nullable } from '../core/schema-types.js';

/** POST /tickets/bulk (CONTRACT §4). */
const Uuid = Type.String({ format: 'uuid' });
const Tags = Type.Array(NonBlank({ maxLength: 100 }), { maxItems: 50 });

export const BulkUpdate = Type.Object({
  ticket_ids: Type.Array(Uuid, { minItems: 1, maxItems: 100 }),
  status_id: Type.Optional(Uuid),
  priority_id: Type.Optional(Uuid),
  assigned_agent_id: Type.Optional(Nullable(Uuid)),
  add_tags: Type.Optional(Tags),
  remove_tags: Type.Optional(Tags),
}, { $id: 'BulkUpdate', additionalProperties: false });
export type BulkUpdate = Static<typeof BulkUpdate>;

const BulkResultSchema = Type.Object({
  id: Type.String(),
  ok: Type.Boolean(),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});
export type BulkResult = Static<typeof BulkResultSchema>;

export const BulkAnswer = Type.Object({ updated: Type.Integer(), results: Type.Array(BulkResultSchema) }, { $id: 'BulkAnswer' });
