import { CLI_ACTOR } from '../../src/core/context.js';
import { inTransaction } from '../../src/db/transaction.js';
import { Ticket } from '../../src/tickets/models.js';
import { drawTicketNumber } from '../../src/tickets/numbering.js';
import { Priority, Status } from '../../src/vocab/models.js';
import type { TestEnv } from './app.js';

/**
 * A ticket written through the models, for tests of areas that act on existing tickets (the
 * ticket operations): needs no signed-in token and can start in any status (`status`, a status
 * key; default `new`), which the API cannot (a closed ticket is reached only through changes).
 * Tests of ticket creation itself use `openTicket` (helpers/tickets.ts), through the API.
 */
export async function ticketFixture(
  env: TestEnv, tenantId: string, requesterId: string, options: { subject?: string; status?: string } = {},
): Promise<{ id: string; ticket_number: number; subject: string }> {
  return inTransaction(env.deps, { tenantId, actor: CLI_ACTOR, now: new Date() }, async (ctx) => {
    const status = await Status.scoped(ctx).findOne({ key: options.status ?? 'new' });
    const priority = await Priority.scoped(ctx).findOne({ key: 'normal' });
    const ticket = await Ticket.insertIn(ctx, {
      ticket_number: drawTicketNumber(ctx),
      subject: options.subject ?? 'Printer on floor 3 is jammed',
      status_id: status!.id,
      priority_id: priority!.id,
      requester_id: requesterId,
      channel: 'api',
      created_at: ctx.now,
      updated_at: ctx.now,
    });
    return { id: ticket.id, ticket_number: ticket.ticket_number, subject: ticket.subject };
  });
}
