/**
 * A live feed of committed events for one reader, pulled page by page: the shape the daemon's
 * server-sent-events response (daemon/sse.ts) consumes. Pulling is what bounds memory: a slow
 * client is simply read for less often, and the events wait in the database, not in a buffer.
 */
export interface FeedMessage {
  /** The SSE `id:` (the event's `seq`): what the client sends back as Last-Event-ID. */
  id: string;
  /** The SSE `event:` name. */
  event: string;
  /** Serialised as JSON on one `data:` line. */
  data: unknown;
}

export interface FeedPage {
  messages: FeedMessage[];
  /** More messages are already waiting: read again without waiting for a wake. */
  more: boolean;
}

export interface EventFeed {
  /** The next page after the last message returned; empty when caught up. */
  next(): Promise<FeedPage>;
  /** `wake` is called whenever new messages may be waiting. */
  onWake(wake: () => void): void;
  /** Stops the wakes (idempotent). */
  close(): void;
}
