import { call, type TestEnv } from './app.js';
import { openTicket, vocab } from './tickets.js';
import { multipart } from './conversation.js';

/**
 * Tickets for the archiver's tests: opened through the API (first message, events), with a public
 * reply and a private note, closed, then their closing moved `daysAgo` into the past.
 */
export interface ArchivableTicket { id: string; ticket_number: number; subject: string }

export async function oldClosedTickets(
  env: TestEnv, tenant: { id: string; admin: { token: string } }, requesterId: string, n: number, daysAgo = 400,
): Promise<ArchivableTicket[]> {
  const token = tenant.admin.token;
  const v = await vocab(env, token);
  const out: ArchivableTicket[] = [];
  for (let i = 0; i < n; i++) {
    const ticket = await openTicket(env, token, { requester_id: requesterId, subject: `Old question ${i}`, body: `Question body ${i}` });
    const answer = await reply(env, token, ticket.id, { body: `Public answer ${i}` });
    if (i === 0) {
      // The first ticket's answer carries an attachment: its reference travels to the archive.
      const form = multipart([{ filename: 'invoice.txt', type: 'text/plain', content: 'Invoice 42' }]);
      const up = await env.app.inject({ method: 'POST', url: `/api/v1/tickets/${ticket.id}/messages/${answer.id}/attachments`, headers: { authorization: `Bearer ${token}`, ...form.headers }, payload: form.payload });
      if (up.statusCode !== 201) throw new Error(`upload answered ${up.statusCode}: ${up.body}`);
    }
    await reply(env, token, ticket.id, { body: `Private note ${i}`, is_private: true });
    const closed = await call(env, 'PATCH', `/tickets/${ticket.id}`, { token, body: { status_id: v.status.closed } });
    if (closed.statusCode !== 200) throw new Error(`closing answered ${closed.statusCode}: ${closed.body}`);
    out.push({ id: ticket.id, ticket_number: ticket.ticket_number, subject: ticket.subject });
  }
  await backdate(env, tenant.id, out.map((t) => t.id), daysAgo);
  return out;
}

/** Moves tickets' closing `daysAgo` days back. */
export async function backdate(env: TestEnv, tenantId: string, ids: string[], daysAgo: number): Promise<void> {
  await env.deps.db('tickets').where({ tenant_id: tenantId }).whereIn('id', ids)
    .update({ closed_at: env.deps.db.raw(`now() - interval '${Number(daysAgo)} days'`) });
}

async function reply(env: TestEnv, token: string, ticketId: string, body: Record<string, unknown>): Promise<{ id: string }> {
  const res = await call(env, 'POST', `/tickets/${ticketId}/messages`, { token, body });
  if (res.statusCode !== 201) throw new Error(`reply answered ${res.statusCode}: ${res.body}`);
  return res.json();
}
