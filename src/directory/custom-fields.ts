import { Type } from '@sinclair/typebox';

/**
 * Free-form custom field values of people and organizations: `{ "<key>": value }` (CONTRACT §4).
 * Keys are snake_case like every field name; values are scalars, bounded like any input.
 */
export const CUSTOM_FIELD_KEY = '^[a-z][a-z0-9_]{0,63}$';

export const CustomFieldValues = Type.Record(
  Type.String({ pattern: CUSTOM_FIELD_KEY }),
  Type.Union([
    Type.String({ maxLength: 2000 }),
    Type.Number({ minimum: -1e15, maximum: 1e15 }),
    Type.Boolean(),
    Type.Null(),
  ]),
  { maxProperties: 50, description: 'Custom field values by key: strings, numbers, booleans or null' },
);
