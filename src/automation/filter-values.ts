import { Type, type Static } from '@sinclair/typebox';
import type { Ctx } from '../core/context.js';
import { errors } from '../core/errors.js';
import { scoped } from '../db/tenant-scope.js';
import { TeamRecord } from '../directory/models.js';
import { CHANNELS } from '../tickets/models.js';
import { customFieldsByKey } from '../vocab/custom-field-values.js';
import { Priority, Status, TicketType } from '../vocab/models.js';
import { TagRecord } from './models.js';

/**
 * GET /tickets/filter-values: autocomplete for the query builder. For a condition field it lists
 * the values a condition on that field takes (`value`, exactly what to send) with what a person
 * reads (`label`), filtered by `q` (case-insensitive part of the label) and cut at `limit`.
 * Tags come from the catalogue (GET /tags); `subject` and text custom fields are free text (none).
 */
export const FilterValuesQuery = Type.Object({
  field: Type.String({ maxLength: 100, description: 'A condition field: status, priority, type, channel, tag, team_id, assigned_agent_id, subject, custom_fields.<key>' }),
  q: Type.Optional(Type.String({ maxLength: 100 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 20 })),
});
export type FilterValuesQuery = Static<typeof FilterValuesQuery>;

export const TicketFilterValues = Type.Object({
  field: Type.String(),
  data: Type.Array(Type.Object({ value: Type.Unknown(), label: Type.String() })),
}, { $id: 'TicketFilterValues' });

type Value = { value: unknown; label: string };
const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function ticketFilterValues(ctx: Ctx, query: FilterValuesQuery): Promise<{ field: string; data: Value[] }> {
  const q = query.q?.trim() ?? '';
  const limit = query.limit ?? 20;
  const like = `%${escapeLike(q)}%`;
  const field = query.field;
  let values: Value[];
  switch (field) {
    case 'status':
      values = (await Status.scoped(ctx).orderBy('statuses.position')).map((s) => ({ value: s.key, label: s.name }));
      break;
    case 'priority':
      values = (await Priority.scoped(ctx).orderBy('priorities.position')).map((p) => ({ value: p.key, label: p.name }));
      break;
    case 'type':
      values = (await TicketType.scoped(ctx).where('ticket_types.active', true).orderBy('ticket_types.position').orderBy('ticket_types.name'))
        .map((t) => ({ value: t.id, label: t.name }));
      break;
    case 'channel':
      values = CHANNELS.map((c) => ({ value: c, label: c }));
      break;
    case 'subject':
      values = [];
      break;
    case 'tag':
      return { field, data: (await TagRecord.scoped(ctx).where('tags.name', 'ilike', like).orderBy('tags.name').limit(limit)).map((t) => ({ value: t.name, label: t.name })) };
    case 'team_id':
      return {
        field,
        data: (await TeamRecord.scoped(ctx).where('teams.name', 'ilike', like).orderByRaw('lower(teams.name)').orderBy('teams.id').limit(limit))
          .map((t) => ({ value: t.id, label: t.name })),
      };
    case 'assigned_agent_id': {
      const rows: Array<{ id: string; name: string }> = await scoped(ctx, 'users').whereIn('users.role', ['admin', 'agent']).where('users.active', true)
        .where('users.name', 'ilike', like).orderByRaw('lower(users.name)').orderBy('users.id').limit(limit).select('users.id', 'users.name');
      return { field, data: rows.map((u) => ({ value: u.id, label: u.name })) };
    }
    default: {
      const key = field.startsWith('custom_fields.') ? field.slice('custom_fields.'.length) : null;
      const custom = key ? (await customFieldsByKey(ctx, [key])).get(key) : undefined;
      if (!custom) throw errors.invalid('field', 'must be status, priority, type, channel, tag, team_id, assigned_agent_id, subject or custom_fields.<key> of a custom field');
      values = custom.kind === 'select' ? custom.options.map((o) => ({ value: o, label: o }))
        : custom.kind === 'bool' ? [{ value: true, label: 'true' }, { value: false, label: 'false' }] : [];
    }
  }
  const folded = q.toLowerCase();
  return { field, data: values.filter((v) => v.label.toLowerCase().includes(folded)).slice(0, limit) };
}
