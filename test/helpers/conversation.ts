import { CLI_ACTOR } from '../../src/core/context.js';
import { inTransaction } from '../../src/db/transaction.js';
import { Ticket } from '../../src/tickets/models.js';
import { drawTicketNumber } from '../../src/tickets/numbering.js';
import { Priority, Status } from '../../src/vocab/models.js';
import type { TestEnv } from './app.js';

/**
 * Fixtures of the conversation's tests: a ticket written straight through the models, in any
 * status and without the first message and event that `POST /tickets` adds (so a test sees only
 * the messages and events it causes; `openTicket` in tickets.ts goes through the API), and
 * multipart bodies as a browser or `curl -F` sends them.
 */
export async function ticketFixture(env: TestEnv, tenantId: string, requesterId: string, statusKey = 'open'): Promise<{ id: string; ticket_number: number }> {
  return inTransaction(env.deps, { tenantId, actor: CLI_ACTOR, now: new Date() }, async (ctx) => {
    const status = (await Status.scoped(ctx).findOne({ key: statusKey }))!;
    const priority = (await Priority.scoped(ctx).findOne({ key: 'normal' }))!;
    const ticket = await Ticket.insertIn(ctx, {
      ticket_number: drawTicketNumber(ctx),
      subject: 'Printer on fire',
      status_id: status.id,
      priority_id: priority.id,
      requester_id: requesterId,
      channel: 'api',
      resolved_at: statusKey === 'resolved' ? ctx.now : null,
      created_at: ctx.now,
      updated_at: ctx.now,
    });
    return { id: ticket.id, ticket_number: ticket.ticket_number };
  });
}

/** Moves a ticket to the status of `key` behind the API's back (closing it, say). */
export async function setStatus(env: TestEnv, tenantId: string, ticketId: string, key: string): Promise<void> {
  const status = await env.deps.db('statuses').where({ tenant_id: tenantId, key }).first();
  await env.deps.db('tickets').where({ tenant_id: tenantId, id: ticketId }).update({ status_id: status.id });
}

export interface FilePart {
  name?: string;
  filename: string;
  type?: string;
  content: Buffer | string;
}

/** A multipart/form-data body of file parts (default name `file`). */
export function multipart(parts: FilePart[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----helpdesk${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${part.name ?? 'file'}"; filename="${part.filename}"\r\n`
      + `Content-Type: ${part.type ?? 'application/octet-stream'}\r\n\r\n`,
    ));
    chunks.push(Buffer.isBuffer(part.content) ? part.content : Buffer.from(part.content));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** The smallest valid PNG (1×1, transparent). */
export const PNG_1X1 = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6300010000050001' + '0d0a2db40000000049454e44ae426082',
  'hex',
);

/** A WAV file's header and a few silent samples. */
export function wavBytes(samples = 64): Buffer {
  const data = Buffer.alloc(samples * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
