/**
 * The composition root: the one place where areas that must not import each other are connected
 * (event consumers such as the webhook outbox and mail notifications; ticket lifecycle hooks such
 * as routing and the SLA clock). Every process entry point (the daemon's app, the CLI backend, the
 * job runner) calls `wireDomain()` before serving; registrations are idempotent.
 */
import { registerEventConsumer } from './events/consumers.js';
import { notifyOnEvent } from './mail/outbox.js';

let wired = false;

export function wireDomain(): void {
  if (wired) return;
  wired = true;
  // Areas register their event consumers and lifecycle hooks here as they land.
  registerEventConsumer('mail-notifications', notifyOnEvent);
}
