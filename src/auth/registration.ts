import type { Ctx } from '../core/context.js';
import { errors, type FieldProblem } from '../core/errors.js';
import { insertUser } from '../directory/user-store.js';
import { recordCustomerEvent } from '../directory/customer-events.js';
import { recordAudit } from '../audit/service.js';
import { passwordProblems } from './passwords.js';
import { signIn, type LoginAnswer } from './sign-in.js';

/** Self-service sign-up for the customer portal: a customer account, signed in at once. */
export interface RegisterInput {
  email: string;
  name: string;
  password: string;
  userAgent: string | null;
}

export async function register(ctx: Ctx, input: RegisterInput): Promise<LoginAnswer> {
  const problems: FieldProblem[] = [];
  if (!input.name.trim()) problems.push({ field: 'name', message: 'must not be blank' });
  problems.push(...passwordProblems('password', input.password));
  if (problems.length) throw errors.validation(problems);

  const user = await insertUser(ctx, { email: input.email, name: input.name, role: 'customer', password: input.password });
  await recordAudit(ctx, {
    action: 'user.registered',
    resourceType: 'user',
    resourceId: user.id,
    changes: { email: user.email, role: user.role },
    actor: { type: 'user', id: user.id, name: user.name },
  });
  await recordCustomerEvent(ctx, 'customer.created', user);
  return signIn(ctx, user, input.userAgent);
}
