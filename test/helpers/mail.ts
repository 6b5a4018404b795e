import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { simpleParser, type ParsedMail } from 'mailparser';
import { call, type TestEnv } from './app.js';
import type { ReceivedMail } from './smtp.js';

/**
 * Mail for the email channel's tests: real RFC 822 messages built by nodemailer's composer,
 * delivered through the inbound route, and received mail parsed by mailparser.
 */
let sequence = 0;

export async function compose(options: Mail.Options): Promise<Buffer> {
  const withId = { messageId: `<test.${Date.now()}.${++sequence}@customer.example>`, ...options };
  return new MailComposer(withId).compile().build();
}

/** The tenant's inbound token, read from its mail settings (`inbound_url`). */
export async function inboundPath(env: TestEnv, adminToken: string): Promise<string> {
  const res = await call(env, 'GET', '/mail-settings', { token: adminToken });
  if (res.statusCode !== 200) throw new Error(`GET /mail-settings answered ${res.statusCode}: ${res.body}`);
  return new URL(res.json().inbound_url).pathname;
}

export async function deliver(env: TestEnv, path: string, raw: Buffer | string) {
  return env.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'message/rfc822' }, payload: raw });
}

export function parse(mail: ReceivedMail): Promise<ParsedMail> {
  return simpleParser(mail.source);
}

export function headerOf(parsed: ParsedMail, name: string): string {
  const value = parsed.headers.get(name);
  return typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);
}
