import { request } from 'undici';
import { outboundTargetProblem } from '../push/outbound-target.js';

/**
 * The HTTP side of the connectors (ARCHITECTURE rule 9): every vendor sits behind this adapter at
 * the base URL its administrator registered, so tests run real local servers on loopback. The
 * vendor API shapes are ours to name (neutral products): OAuth 2.0 token endpoint at
 * `/oauth/token` (form-encoded), rooms at `/rooms`, calendar events, change subscriptions and
 * free/busy per calendar product below. Every call has a deadline.
 */
export type VideoProvider = 'video_a' | 'video_b' | 'video_c';
export type CalendarProvider = 'calendar_a' | 'calendar_b';
export type ConnectorProvider = VideoProvider | CalendarProvider;
export const PROVIDERS: readonly ConnectorProvider[] = ['video_a', 'video_b', 'video_c', 'calendar_a', 'calendar_b'];
export const isCalendar = (p: string): p is CalendarProvider => p === 'calendar_a' || p === 'calendar_b';

export class VendorError extends Error {
  constructor(message: string, readonly status: number | null = null) {
    super(message);
  }
}

export interface VendorTarget { baseUrl: string; allowPrivate: boolean }

export async function vendorCall<T>(target: VendorTarget, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, options: {
  token?: string; json?: unknown; form?: Record<string, string>; timeoutMs: number;
}): Promise<T> {
  const url = `${target.baseUrl.replace(/\/+$/, '')}${path}`;
  const problem = await outboundTargetProblem(url, target.allowPrivate);
  if (problem) throw new VendorError(`vendor URL ${problem}`);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  } else if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const res = await request(url, { method, headers, body, signal: AbortSignal.timeout(options.timeoutMs) });
  const text = await res.body.text();
  if (res.statusCode < 200 || res.statusCode >= 300) throw new VendorError(`${method} ${path} answered ${res.statusCode}`, res.statusCode);
  if (!text) return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new VendorError(`${method} ${path} answered no JSON`);
  }
}

/** Paths of the two calendar products. */
export const CALENDAR_API = {
  calendar_a: {
    events: '/me/events', update: 'PATCH' as const, freeBusy: '/me/getSchedule',
    subscribe: '/subscriptions', renew: (id: string) => ({ method: 'PATCH' as const, path: `/subscriptions/${encodeURIComponent(id)}` }),
  },
  calendar_b: {
    events: '/calendars/primary/events', update: 'PUT' as const, freeBusy: '/freeBusy',
    subscribe: '/calendars/primary/events/watch', renew: (_id: string) => ({ method: 'POST' as const, path: '/calendars/primary/events/watch' }),
  },
};
