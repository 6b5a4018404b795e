import type { FastifyInstance } from 'fastify';
import { errors, type FieldProblem } from '../../src/core/errors.js';
import { textProblem } from '../../src/core/text.js';

/**
 * One input normalisation for every route: before validation, every string of a declared body,
 * query and path — values and object keys, at any depth, jsonb-bound objects such as
 * custom_fields included — is checked with the text rule (src/core/text.ts). A body or query
 * problem is 422 naming the field; a path parameter that breaks it is an id that cannot exist
 * (404, as for any malformed id). Bodies nest at most MAX_DEPTH levels: PostgreSQL's jsonb and
 * every recursive reader downstream have limits of their own.
 */
export const MAX_DEPTH = 32;

/** Printable field names: a key with control characters is named with escapes. */
function printable(key: string): string {
  return key.replace(/[\u0000-\u001F\uD800-\uDFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Problems of every string in `value`, walked without recursion (a deep body cannot overflow the stack). */
export function textProblems(value: unknown, root: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const stack: Array<{ value: unknown; path: string[] }> = [{ value, path: [] }];
  const field = (path: string[]) => path.join('.') || root;
  while (stack.length) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      const problem = textProblem(current);
      if (problem) problems.push({ field: field(path), message: problem });
    } else if (current && typeof current === 'object') {
      if (path.length >= MAX_DEPTH) {
        problems.push({ field: field(path), message: `must not nest deeper than ${MAX_DEPTH} levels` });
        continue;
      }
      for (const [key, child] of Object.entries(current)) {
        const keyProblem = textProblem(key);
        if (keyProblem) problems.push({ field: field([...path, printable(key)]), message: `has a key that ${keyProblem}` });
        stack.push({ value: child, path: [...path, key] });
      }
    }
  }
  return problems.reverse();
}

export function textGuardPlugin(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const schema = request.routeDef?.schema;
    if (!schema) return;
    if (schema.params && textProblems(request.params, '(params)').length) {
      // The same answer as a malformed id: let the error translation name the resource.
      throw Object.assign(new Error('invalid path parameter'), { validation: [], validationContext: 'params' });
    }
    const problems = [
      ...(schema.querystring ? textProblems(request.query, '(query)') : []),
      ...(schema.body ? textProblems(request.body, '(body)') : []),
    ];
    if (problems.length) throw errors.validation(problems);
  });
}
