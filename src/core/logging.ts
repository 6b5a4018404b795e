import { createRequire } from 'node:module';
import { isatty } from 'node:tty';
import pino, { type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';

export type { Logger };

/**
 * Log lines are JSON (one object per line: right for log shippers) or, for a person at a
 * terminal, pretty: one human line each. HELPDESK_LOG_FORMAT chooses; unset, a terminal gets
 * pretty lines and anything else (a pipe, a file, a supervisor) JSON.
 */
export type LogFormat = 'json' | 'pretty';

export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

export interface LogOutput {
  /** 1 (stdout, the default) or 2 (stderr). */
  fd?: 1 | 2;
  /** Default: JSON. See logFormatFor() for the configured-or-terminal choice. */
  format?: LogFormat;
  /** Pretty lines are coloured on a terminal unless this is set (NO_COLOR). */
  noColor?: boolean;
}

/** The configured format, else pretty when the file descriptor is a terminal. */
export function logFormatFor(configured: LogFormat | null, fd: 1 | 2): LogFormat {
  return configured ?? (isatty(fd) ? 'pretty' : 'json');
}

const REDACT = {
  paths: ['req.headers.authorization', 'req.headers["x-csrf-token"]', '*.password', '*.token', '*.secret'],
  censor: '[redacted]',
};

/** One pino logger for the process; secrets and tokens are redacted wherever they appear. */
export function createLogger(level: string, output: LogOutput = {}): Logger {
  const fd = output.fd ?? 1;
  if (output.format === 'pretty') return pino({ level, redact: REDACT }, prettyStream(fd, isatty(fd) && !output.noColor));
  // JSON lines on a pipe or file (stdout of a supervised daemon) are written asynchronously, for
  // throughput; on a terminal, and on stderr, synchronously: a busy terminal answers EAGAIN, and
  // asynchronous writes were seen to lose lines there.
  const sync = fd === 2 || isatty(fd);
  return pino({ level, redact: REDACT }, sync ? pino.destination({ dest: fd, sync: true }) : undefined);
}

/**
 * `14:02:07.311 INFO: request completed GET /api/v1/healthz 200 3.4 ms {"reqId":"…"}`: the time,
 * the level, the message with a request's method, URL, status and duration, then what else the
 * line carries. Written synchronously, so nothing is lost when the process exits.
 */
function prettyStream(fd: 1 | 2, colorize: boolean) {
  // Loaded only when used: every CLI command reads this module, few of them on a terminal.
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  return pretty({
    destination: fd,
    sync: true,
    colorize,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,req,res,responseTime',
    messageFormat: (log, messageKey) => {
      const parts = [String(log[messageKey] ?? '')];
      const req = log.req as { method?: string; url?: string } | undefined;
      const res = log.res as { statusCode?: number } | undefined;
      if (req?.method) parts.push(`${req.method} ${req.url}`);
      if (res?.statusCode) parts.push(String(res.statusCode));
      if (typeof log.responseTime === 'number') parts.push(`${log.responseTime.toFixed(1)} ms`);
      return parts.join(' ');
    },
  });
}
