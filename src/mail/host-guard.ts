import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { errors } from '../core/errors.js';

/**
 * The outbound-target rule of CONTRACT §5/§14 for mail servers a tenant names: the host must not
 * be or resolve to a loopback, private, link-local, metadata or otherwise non-public address,
 * unless the operator sets HELPDESK_WEBHOOKS_ALLOW_PRIVATE=1 (which governs every tenant-supplied
 * outbound target). Checked when settings are saved and again before every connection, because
 * a name can resolve elsewhere later (DNS rebinding).
 *
 * A minimal guard of the mail channel's own: the webhooks area has the full one
 * (src/webhooks/url-guard.ts); when both branches meet this can call it instead.
 */
const HOST_RE = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

/** Is the host well formed (a DNS name or an IP literal)? For the settings' validation. */
export function isWellFormedHost(host: string): boolean {
  return ipaddr.isValid(host) || HOST_RE.test(host);
}

/** Throws `422 validation_failed` on `field` when the host is not an allowed outbound target. */
export async function assertAllowedHost(host: string, allowPrivate: boolean, field: string): Promise<void> {
  if (!isWellFormedHost(host)) throw errors.invalid(field, 'is not a valid host name or address');
  if (allowPrivate) return;
  let addresses: string[];
  try {
    addresses = ipaddr.isValid(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    throw errors.invalid(field, 'does not resolve');
  }
  if (!addresses.length || !addresses.every(isPublicAddress)) {
    throw errors.invalid(field, 'resolves to a loopback, private, link-local or reserved address');
  }
}
