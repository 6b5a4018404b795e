import pino, { type Logger } from 'pino';

export type { Logger };

/** One pino logger for the process; secrets and tokens are redacted wherever they appear. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: ['req.headers.authorization', 'req.headers["x-csrf-token"]', '*.password', '*.token', '*.secret'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
