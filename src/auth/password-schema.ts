import { Type } from '@sinclair/typebox';
import { PASSWORD_MAX, PASSWORD_MIN } from './passwords.js';

/**
 * A password being set (registration, reset, change, user creation): the schema states the
 * policy of passwords.ts, so the OpenAPI document promises exactly what the server enforces.
 */
export const NewPassword = Type.String({
  minLength: PASSWORD_MIN,
  maxLength: PASSWORD_MAX,
  description: `At least ${PASSWORD_MIN} and at most ${PASSWORD_MAX} characters`,
});
