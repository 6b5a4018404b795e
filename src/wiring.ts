/**
 * The composition root: the one place where areas that must not import each other are connected
 * (event consumers such as the webhook outbox and mail notifications; ticket lifecycle hooks such
 * as routing and the SLA clock). Every process entry point (the daemon's app, the CLI backend, the
 * job runner) calls `wireDomain()` before serving; registrations are idempotent.
 */
import { registerTicketHook } from './tickets/hooks.js';
import { routingHook } from './automation/routing.js';

let wired = false;

export function wireDomain(): void {
  if (wired) return;
  wired = true;
  // Areas register their event consumers and lifecycle hooks here as they land.
  // Routing stays the LAST ticket hook: on creation the SLA clock (and any other hook) has seen the
  // ticket first, and routing's own changes re-run them through applyTicketChanges.
  registerTicketHook('routing', routingHook);
}
