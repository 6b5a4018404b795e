/**
 * The composition root: the one place where areas that must not import each other are connected
 * (event consumers such as the webhook outbox and mail notifications; ticket lifecycle hooks such
 * as routing and the SLA clock). Every process entry point (the daemon's app, the CLI backend, the
 * job runner) calls `wireDomain()` before serving; registrations are idempotent.
 */
import { registerNewTicketColumns, registerTicketHook } from './tickets/hooks.js';
import { endSnoozeOnClose, endSnoozeOnCustomerReply } from './tickets/snooze.js';
import { slaMessageColumns, slaNewTicketColumns, slaTicketHook } from './sla/ticket-clock.js';
import { registerAttachmentsHook, registerMessageHook } from './conversation/hooks.js';
import { registerEventCompanions, registerEventConsumer } from './events/consumers.js';
import { deliveryRows } from './webhooks/outbox.js';
import { routingHook } from './automation/routing.js';
import { onStatusChanged } from './csat/surveys.js';
import { pushOnTicketEvent } from './push/fan-out.js';
import { notifyOnEvent } from './mail/outbox.js';
import { countReopening } from './reports/reopen-hook.js';
import { registerCalendarReplyHandler } from './mail/calendar-replies.js';
import { handleRsvp } from './meetings/rsvp.js';
import { queueChannelAttachments, queueChannelReply } from './channels/outbound.js';
import { registerArchiveReader } from './tickets/archive-port.js';
import { archiveReader } from './archiver/read.js';
import { registerChannelBotResponder } from './channels/inbound.js';
import { channelBotResponder } from './bots/channel-turn.js';

let wired = false;

export function wireDomain(): void {
  if (wired) return;
  wired = true;
  // Areas register their event consumers and lifecycle hooks here as they land.
  registerTicketHook('snooze', endSnoozeOnClose);
  registerNewTicketColumns('sla', slaNewTicketColumns);
  registerTicketHook('sla', slaTicketHook);
  registerTicketHook('reopen-count', countReopening);
  registerMessageHook('snooze', endSnoozeOnCustomerReply);
  // Public replies move the first- and next-response clocks (CONTRACT §11).
  registerMessageHook('sla', (ctx, { ticket, message }) => slaMessageColumns(ctx, ticket, message));
  // A public staff reply on a messaging or social ticket is queued for its channel (and refused by
  // the 24-hour rule of messaging_a) inside the reply's transaction.
  registerMessageHook('channels', queueChannelReply);
  // Files uploaded to such a reply afterwards are sent as media messages after its text.
  registerAttachmentsHook('channels', queueChannelAttachments);
  // Each event's webhook deliveries are written by the statement that stores it.
  registerEventCompanions('webhook-outbox', deliveryRows);
  // Routing stays the LAST ticket hook: on creation the SLA clock (and any other hook) has seen the
  // ticket first, and routing's own changes re-run them through applyTicketChanges.
  registerTicketHook('routing', routingHook);
  // CSAT first: a survey issued on entering the trigger category is there when the resolved mail
  // (a later consumer) asks csatUrlFor() for its link.
  registerEventConsumer('csat-surveys', onStatusChanged);
  registerEventConsumer('push', pushOnTicketEvent);
  registerEventConsumer('mail-notifications', notifyOnEvent);
  // Calendar REPLY mails are RSVPs to meeting invitations, never tickets.
  registerCalendarReplyHandler(handleRsvp);
  // An archived ticket is read back from the archive (CONTRACT §19).
  registerArchiveReader(archiveReader);
  // An active bot flow of a channel source answers first (CONTRACT §17).
  registerChannelBotResponder(channelBotResponder);
}
