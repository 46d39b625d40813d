/**
 * Which webhook URLs may be called: https only, and never a private, loopback, link-local,
 * unspecified or multicast address, unless the operator allows them (QUORUM_WEBHOOKS_ALLOW_PRIVATE).
 * Checked when a subscription is created and again at delivery time, on the address actually
 * connected to (`guardedLookup`), so a DNS answer that changes later cannot point a delivery inward.
 * An IPv6 address that carries an IPv4 one (mapped, translated, IPv4-compatible, NAT64
 * 64:ff9b::/96, 6to4 2002::/16, a Teredo client) is judged by that IPv4 address too: a NAT64
 * gateway or 6to4 relay would carry the request to it. The local-use NAT64 prefix 64:ff9b:1::/48
 * (RFC 8215, translated into the operator's own network) is refused whole.
 */
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { ipv4Of, ipv6Groups } from '../../http/ip.ts';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
// fec0::/10: site-local, the private range of IPv6 before fc00::/7 (RFC 3879 deprecated it, but a
// network may still route it; Windows still sets fec0:0:0:ffff::1-3 as its DNS servers). QA: a
// subscription to https://[fec0::1]/ was accepted.
for (const [net, prefix] of [['::', 128], ['::1', 128], ['64:ff9b:1::', 48], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

export class WebhookUrlError extends Error {}

/**
 * The IPv4 addresses an IPv6 address carries, by the standard embeddings: IPv4-mapped
 * (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), IPv4-compatible (::/96, deprecated but still
 * routed by some stacks), NAT64 well-known prefix (64:ff9b::/96, RFC 6052), 6to4 (2002::/16, the
 * IPv4 in bits 16-47, RFC 3056) and Teredo (2001::/32: the server in bits 32-63 and the client,
 * bit-inverted, in the last 32 bits, RFC 4380).
 */
export function embeddedIPv4(address: string): string[] {
  const g = ipv6Groups(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return [ipv4Of(g[6]!, g[7]!)];
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return [ipv4Of(g[6]!, g[7]!)];
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return [ipv4Of(g[6]!, g[7]!)];
  if (g[0] === 0x2002) return [ipv4Of(g[1]!, g[2]!)];
  if (g[0] === 0x2001 && g[1] === 0) return [ipv4Of(g[2]!, g[3]!), ipv4Of(g[6]! ^ 0xffff, g[7]! ^ 0xffff)];
  return [];
}

/**
 * True when `address` (an IP) is private, loopback, link-local, unspecified or multicast; for an
 * IPv6 address, also when an IPv4 address it embeds is (see {@link embeddedIPv4}).
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 4) return blocked.check(address, 'ipv4');
  return embeddedIPv4(address).some((v4) => blocked.check(v4, 'ipv4')) || blocked.check(address, 'ipv6');
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => dnsLookup(host, { all: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))));
}

/** Parses and checks a subscription URL (scheme, credentials, every resolved address). */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  // A URL parser drops every tab and line break inside a URL: "https://exa\tmple.com/" is
  // https://example.com/, and a header-injection attempt ("/x\r\nX-Injected: 1") another path.
  // Refused, not stored as another address than the one given (outside test). Around it they are
  // only trimmed, as spaces are (a URL read from a file with its line break); other control
  // characters are kept, percent-encoded (the stored URL is the parsed one).
  if (/[\t\n\r]/.test(raw.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, ''))) {
    throw new WebhookUrlError('url must not contain a tab or line break (a URL parser drops them: the address called would not be the one given)');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlError('url is not a valid absolute URL (such as https://example.com/hook; a port is 1-65535)');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    throw new WebhookUrlError('url must be https');
  }
  if (url.username || url.password) throw new WebhookUrlError('url must not carry credentials');
  // Port 0 can never be connected to (QA: such a subscription was made, and failed for a day).
  if (url.port === '0') throw new WebhookUrlError('url port must be 1-65535');
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addrs: LookupAddress[];
  try {
    addrs = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolveAll(host);
  } catch {
    throw new WebhookUrlError(`url host ${host} does not resolve`);
  }
  if (addrs.length === 0 || addrs.some((a) => isPrivateAddress(a.address))) {
    throw new WebhookUrlError('url resolves to a private, loopback or link-local address');
  }
  return url;
}

/**
 * The address of `url` when its host is an IP literal that is private (what guardedLookup refuses
 * for a name), else null. A connection to a literal never asks `lookup`, so a subscription made
 * while QUORUM_WEBHOOKS_ALLOW_PRIVATE was on kept its deliveries to 127.0.0.1 after it was turned
 * off (QA); the dispatcher checks this before each attempt.
 */
export function privateLiteral(url: string): string | null {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return null;
  }
  return isIP(host) !== 0 && isPrivateAddress(host) ? host : null;
}

/**
 * Why an attempt to `url` gets no connection while QUORUM_WEBHOOKS_ALLOW_PRIVATE is off (null: it
 * may connect, a name's addresses then checked by guardedLookup): a URL that is not https, or a
 * private IP literal ({@link privateLiteral}). The setting is what let such a subscription be made;
 * turned off, an http one kept receiving every event in the clear, to any host (QA).
 */
export function refusedWithoutPrivate(url: string): string | null {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    return null; // (never: a stored URL is a parsed one; undici reports it)
  }
  const literal = privateLiteral(url);
  if (literal !== null) return `${literal} is a private address (QUORUM_WEBHOOKS_ALLOW_PRIVATE is off): not connected`;
  // the origin only: the path and query may carry the receiver's token, and this reason is logged
  // with every attempt (QA: the whole URL was)
  return protocol === 'https:' ? null : `${new URL(url).origin} is not https (QUORUM_WEBHOOKS_ALLOW_PRIVATE is off): not connected`;
}

/** A `lookup` for the delivery agent that refuses private addresses at connect time. */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: object, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addrs) => {
      if (err) return callback(err, '');
      const list = addrs as LookupAddress[];
      if (!allowPrivate && list.some((a) => isPrivateAddress(a.address))) {
        return callback(new WebhookUrlError(`${hostname} resolves to a private address`), '');
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
