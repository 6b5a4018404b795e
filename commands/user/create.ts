import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { withLocalBackend } from '../../src/cli/backend.js';
import { ROLES } from '../../src/core/context.js';
import { errors, type FieldProblem } from '../../src/core/errors.js';
import { createUser } from '../../src/directory/users.js';
import type { User } from '../../src/directory/user-schemas.js';

export default class UserCreate extends BaseCommand {
  static override summary = 'Create a user (staff or customer) in a tenant';
  static override examples = ['<%= config.bin %> user create --tenant acme --email ann@acme.test --name "Ann Agent" --role agent --json'];

  static override flags = {
    tenant: Flags.string({ description: 'Tenant slug', required: true }),
    email: Flags.string({ description: 'Email address (unique in the tenant)', required: true }),
    name: Flags.string({ description: 'Display name', required: true }),
    role: Flags.string({ description: 'Role', options: [...ROLES], default: 'agent' }),
    password: Flags.string({ description: 'Password (at least 12 characters); without one the user signs in after a password reset' }),
  };

  async run(): Promise<User> {
    const { flags } = await this.parse(UserCreate);
    // The same input rules as POST /users' schema, for the fields a flag can carry.
    const problems: FieldProblem[] = [];
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(flags.email)) problems.push({ field: 'email', message: 'must be a valid email' });
    if (!flags.name.trim()) problems.push({ field: 'name', message: 'must not be blank' });
    if (flags.password !== undefined && flags.password.length < 12) problems.push({ field: 'password', message: 'must be at least 12 characters' });
    if (problems.length) throw errors.validation(problems);

    const user = await withLocalBackend(async ({ tenant, inTenant }) => {
      const { id } = await tenant(flags.tenant);
      return inTenant(id, (ctx) =>
        createUser(ctx, { email: flags.email, name: flags.name, role: flags.role as User['role'], ...(flags.password ? { password: flags.password } : {}) }),
      );
    });
    this.log(`Created ${user.role} ${user.name} <${user.email}> (${user.id}) in tenant ${flags.tenant}`);
    return user;
  }
}
