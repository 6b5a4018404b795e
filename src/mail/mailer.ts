import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '../core/logging.js';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/**
 * Outgoing mail through SMTP_URL (an adapter with a configurable address, ARCHITECTURE rule 9).
 * Without SMTP_URL mail is not sent but logged with its recipient and subject, so a fresh install
 * shows that it would have mailed; the body is left out because it carries tokens.
 */
export function createMailer(smtpUrl: string | null, from: string, log: Logger): Mailer {
  if (!smtpUrl) {
    return {
      async send(mail) {
        log.warn({ to: mail.to, subject: mail.subject }, 'SMTP_URL is not set: mail not sent');
      },
      close() {},
    };
  }
  const transport: Transporter = nodemailer.createTransport(smtpUrl);
  return {
    async send(mail) {
      await transport.sendMail({ from, ...mail });
    },
    close() {
      transport.close();
    },
  };
}
