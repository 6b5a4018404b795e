import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

/**
 * A real SMTP receiver on loopback for tests: pass `url` as the app's smtpUrl, then read what
 * arrived. Messages are kept raw (RFC 822 text), decoded from quoted-printable when needed.
 */
export interface ReceivedMail {
  to: string[];
  raw: string;
  /** The bytes as received (for a MIME parser; `raw` is decoded for reading). */
  source: Buffer;
}

export interface SmtpSink {
  url: string;
  messages: ReceivedMail[];
  /** How many messages nextMail() has handed out. */
  consumed: number;
}

function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** With `users`, the receiver checks a login (PLAIN/LOGIN) against them; without, anyone may send. */
export async function smtpSink(t: Test, options: { users?: Record<string, string> } = {}): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  const users = options.users;
  const server = new SMTPServer({
    authOptional: !users,
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (users && auth.username && users[auth.username] === auth.password) return callback(null, { user: auth.username });
      callback(new Error('Invalid username or password'));
    },
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const source = Buffer.concat(chunks);
        const raw = source.toString('utf8');
        messages.push({
          source,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: /quoted-printable/i.test(raw) ? decodeQuotedPrintable(raw) : raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, messages, consumed: 0 };
}

/** Waits (briefly) until `count` messages arrived: mail is sent after commit, off the request. */
export async function waitForMail(sink: SmtpSink, count: number, timeoutMs = 5000): Promise<ReceivedMail[]> {
  const deadline = Date.now() + timeoutMs;
  while (sink.messages.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return sink.messages;
}

/** The next message not yet read through this function, waiting (briefly) for it to arrive. */
export async function nextMail(sink: SmtpSink, timeoutMs = 5000): Promise<ReceivedMail> {
  await waitForMail(sink, sink.consumed + 1, timeoutMs);
  const mail = sink.messages[sink.consumed];
  if (!mail) throw new Error(`no mail arrived within ${timeoutMs} ms`);
  sink.consumed += 1;
  return mail;
}
