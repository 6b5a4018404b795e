import type { Deps } from '../core/context.js';
import { sessionCleanup } from './session-cleanup.js';
import { ticketUnsnooze } from './ticket-unsnooze.js';
import { slaEscalation } from '../sla/escalation.js';
import { dispatchDue } from '../webhooks/dispatcher.js';
import { routingTimeTrigger } from '../automation/time-trigger.js';
import { pushSendJob } from '../push/send.js';
import { sendDueNotifications } from '../mail/send.js';
import { fetchMail } from '../mail/imap-fetch.js';
import { renewSubscriptions } from '../meetings/renewal.js';
import { legacyImportJob } from '../legacy-import/runs.js';
import { reportRollup } from '../reports/rollup.js';
import { ingestJob } from '../kb/documents.js';
import { crawlJob } from '../kb/crawler.js';
import { chatSweep } from '../webchat/sweep.js';
import { channelDeliveryJob } from '../channels/outbound.js';
import { processInbound } from '../channels/inbound.js';
import { ticketArchiveJob } from '../archiver/runs.js';
import { publishPending } from '../events/publisher.js';

/**
 * Every background job, in one list: the scheduler (src/jobs/manager.ts) runs each on its
 * schedule in a worker thread, and `helpdesk jobs run NAME --now TS` runs one in-process.
 * A job takes `now` (ARCHITECTURE rule 5) so it can run at a simulated time, and must be
 * idempotent: a run that repeats or overlaps another daemon's run does no harm.
 */
export interface JobDef {
  name: string;
  description: string;
  /** Bree schedule: a human interval (`'1h'`, `'30s'`) or a cron expression (`'0 3 * * *'`). */
  schedule: string;
  run(deps: Deps, now: Date): Promise<Record<string, unknown>>;
}

export const JOBS: readonly JobDef[] = [
  {
    name: 'session-cleanup',
    description: 'Purges sessions expired or revoked over a week ago, and spent reset tokens, login challenges and login attempts over a day old, in every tenant',
    schedule: '1h',
    run: sessionCleanup,
  },
  {
    name: 'ticket-unsnooze',
    description: 'Ends every ticket snooze whose time has come, recording ticket.unsnoozed on the timeline, in every tenant',
    schedule: '1m',
    run: ticketUnsnooze,
  },
  {
    name: 'sla-escalation',
    description: 'Records SLA warnings and breaches (once each) for the tickets whose next SLA instant has come, in every tenant',
    schedule: '1m',
    run: slaEscalation,
  },
  {
    name: 'webhook-dispatch',
    description: 'Sends the webhook deliveries due now (first attempts and retries of the ladder) in every tenant; serve also dispatches on every commit',
    schedule: '1m',
    run: dispatchDue,
  },
  {
    name: 'routing-time-trigger',
    description: 'Runs the routing rules with the time_trigger occasion over open, unassigned tickets (oldest first, 200 per tenant a run), assigning agents who have room by now',
    schedule: '1m',
    run: routingTimeTrigger,
  },
  {
    name: 'push-send',
    description: 'Sends browser pushes still due in every tenant: retries, and pushes a process could not send right after commit',
    schedule: '1m',
    run: pushSendJob,
  },
  {
    name: 'mail-send',
    description: 'Sends due notification mail from the outbox and retries failures after 1, 5 and 30 minutes before marking them failed',
    schedule: '30s',
    run: async (deps, now) => ({ ...(await sendDueNotifications(deps, now)) }),
  },
  {
    name: 'mail-fetch',
    description: "Polls every tenant's IMAP mailbox whose interval has passed and turns new messages into tickets and replies",
    schedule: '30s',
    run: async (deps, now) => ({ ...(await fetchMail(deps, now)) }),
  },
  {
    name: 'calendar-subscription-renewal',
    description: 'Renews the external calendar subscriptions (calendar_a, calendar_b) that end within two hours, in every tenant',
    schedule: '1h',
    run: async (deps, now) => ({ ...(await renewSubscriptions(deps, now)) }),
  },
  {
    name: 'legacy-import',
    description: 'Runs the osTicket imports queued through POST /legacy-import, oldest first, and resumes a run whose process died before it finished',
    schedule: '30s',
    run: async (deps, now) => ({ ...(await legacyImportJob(deps, now)) }),
  },
  {
    name: 'report-rollup',
    description: "Rolls every tenant's report figures up by UTC hour to the last whole hour, and recomputes the hours later changes marked dirty",
    schedule: '5m',
    run: reportRollup,
  },
  {
    name: 'kb-ingest',
    description: 'Ingests the knowledge base documents queued by uploads and replacements (text extraction, passages, index), oldest first, in every tenant',
    schedule: '30s',
    run: async (deps, now) => ({ ...(await ingestJob(deps, now)) }),
  },
  {
    name: 'kb-crawl',
    description: 'Runs the knowledge base crawls queued through POST /kb-documents/crawl, and resumes one whose process died',
    schedule: '1m',
    run: async (deps, now) => ({ ...(await crawlJob(deps, now)) }),
  },
  {
    name: 'chat-sweep',
    description: 'Abandons bot sessions idle for 30 minutes (ending their web chats), and announces agents and chat visitors gone offline after 60 s without a heartbeat, in every tenant',
    schedule: '1m',
    run: chatSweep,
  },
  {
    name: 'channel-inbound',
    description: 'Processes messaging and social channel messages stored by the webhooks but not yet turned into ticket messages (after a crash or a failure), in every tenant',
    schedule: '1m',
    run: async (deps, now) => ({ ...(await processInbound(deps, now)) }),
  },
  {
    name: 'channel-delivery',
    description: 'Sends staff replies due on messaging and social channels: first attempts a process could not make after commit, and retries with back-off after a vendor 429, 5xx or network failure',
    schedule: '30s',
    run: channelDeliveryJob,
  },
  {
    name: 'ticket-archive',
    description: 'Runs the archive runs queued through POST /ticket-archiver/run (closed tickets to Parquet in the object store), and resumes a run whose process died, batch by batch from its manifest',
    schedule: '1m',
    run: async (deps, now) => ({ ...(await ticketArchiveJob(deps, now)) }),
  },
  {
    name: 'event-publish',
    description: 'Numbers the committed events a process left unnumbered (it stopped between its commit and its publisher run) and announces them to the live stream and the webhook dispatcher, in every tenant',
    schedule: '30s',
    run: async (deps) => publishPending(deps),
  },
];

export function findJob(name: string, jobs: readonly JobDef[] = JOBS): JobDef | null {
  return jobs.find((job) => job.name === name) ?? null;
}
