import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * The outbound target rule of CONTRACT §5/§14 for push endpoints: `https://` only, and never a
 * loopback, private, link-local, carrier-grade NAT, multicast or metadata address, unless the
 * operator allows private targets (HELPDESK_WEBHOOKS_ALLOW_PRIVATE=1, which then also allows
 * `http://`). Checked when a subscription is saved and again before every send (DNS can change).
 * A minimal guard of this area; the webhooks' guard can replace it when the branches meet.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

function isBlockedAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  return blocked.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/** Why the URL may not be a push target, or null when it may. */
export async function outboundTargetProblem(raw: string, allowPrivate: boolean): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return 'must be an https:// URL';
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    return 'names a host that does not resolve';
  }
  if (!addresses.length || addresses.some(isBlockedAddress)) return 'must not point to a loopback, private, link-local or metadata address';
  return null;
}
