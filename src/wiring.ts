/**
 * The composition root: the one place where areas that must not import each other are connected
 * (event consumers such as the webhook outbox and mail notifications; ticket lifecycle hooks such
 * as routing and the SLA clock). Every process entry point (the daemon's app, the CLI backend, the
 * job runner) calls `wireDomain()` before serving; registrations are idempotent.
 */
import { registerEventConsumer } from './events/consumers.js';
import { onStatusChanged } from './csat/surveys.js';
import { pushOnTicketEvent } from './push/fan-out.js';

let wired = false;

export function wireDomain(): void {
  if (wired) return;
  wired = true;
  // Areas register their event consumers and lifecycle hooks here as they land.
  // CSAT first: a survey issued on entering the trigger category is there when the resolved mail
  // (a later consumer) asks csatUrlFor() for its link.
  registerEventConsumer('csat-surveys', onStatusChanged);
  registerEventConsumer('push', pushOnTicketEvent);
}
