import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { promises as dns } from 'node:dns';
import ipaddr from 'ipaddr.js';
import type { FieldProblem } from '../core/errors.js';

/**
 * The SSRF guard for tenant-supplied outbound targets (CONTRACT §5, §14). A target must be
 * `https://` and every address its host resolves to must be public unicast: no loopback, private,
 * link-local (cloud metadata lives at 169.254.169.254), CGNAT, unique-local, multicast, reserved,
 * or IPv4 smuggled through IPv4-mapped, NAT64, 6to4 or Teredo forms. It runs at registration and
 * again at every connection (`guardedLookup`), so a DNS answer changed after registration (DNS
 * rebinding) is refused too. `HELPDESK_WEBHOOKS_ALLOW_PRIVATE=1` lifts it, and then allows
 * `http://` as well (tests, private networks).
 */
const BLOCKED_NAMES = [/^localhost$/i, /\.localhost$/i, /^metadata$/i, /^metadata\.google\.internal$/i, /^instance-data(\.ec2\.internal)?$/i];

/** True when `address` (v4 or v6 text) is anything but public unicast. */
export function isForbiddenAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  // process() turns IPv4-mapped IPv6 (::ffff:127.0.0.1) into the IPv4 address it carries.
  return ipaddr.process(address).range() !== 'unicast';
}

/** The host of a URL without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** Problems of the URL's form (scheme, credentials, a forbidden literal address or name), without DNS. */
export function urlShapeProblem(raw: string, allowPrivate: boolean, field = 'url'): FieldProblem | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { field, message: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return { field, message: 'must be an https:// URL' };
  if (url.username || url.password) return { field, message: 'must not carry credentials' };
  if (url.hash) return { field, message: 'must not carry a #fragment' };
  if (allowPrivate) return null;
  const host = hostOf(url);
  if (ipaddr.isValid(host)) return isForbiddenAddress(host) ? forbidden(field) : null;
  if (BLOCKED_NAMES.some((re) => re.test(host.replace(/\.$/, '')))) return forbidden(field);
  return null;
}

function forbidden(field: string): FieldProblem {
  return { field, message: 'must not point at a loopback, private, link-local or metadata address' };
}

/** Registration: the form, then (unless private targets are allowed) what the host resolves to now. */
export async function urlProblem(raw: string, allowPrivate: boolean, field = 'url'): Promise<FieldProblem | null> {
  const shape = urlShapeProblem(raw, allowPrivate, field);
  if (shape || allowPrivate) return shape;
  const host = hostOf(new URL(raw));
  if (ipaddr.isValid(host)) return null;
  let addresses: LookupAddress[];
  try {
    addresses = await dns.lookup(host, { all: true, verbatim: true });
  } catch {
    return { field, message: `has a host that does not resolve (${host})` };
  }
  if (!addresses.length) return { field, message: `has a host that does not resolve (${host})` };
  return addresses.some((a) => isForbiddenAddress(a.address)) ? forbidden(field) : null;
}

/** The error a connection to a forbidden address fails with (the sender reports its message). */
export class ForbiddenAddressError extends Error {
  readonly code = 'EFORBIDDENADDRESS';
  constructor(host: string, address: string) {
    super(`refused: ${host} resolves to ${address}, a non-public address`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls.connect that resolves, then refuses non-public addresses: the check at
 * every connection. Node calls it with or without `all`, so it answers in both forms.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupAllOptions | { all?: false }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...(options as object), all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      if (!list.length) return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), []);
      if (!allowPrivate) {
        const bad = list.find((a) => isForbiddenAddress(a.address));
        if (bad) return callback(new ForbiddenAddressError(hostname, bad.address) as NodeJS.ErrnoException, []);
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
