import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { OutboundError } from './outbound-error';

/**
 * Which addresses a webhook may reach. Public means: a global unicast address
 * outside every special-purpose range of the IANA IPv4 and IPv6 registries (the
 * ranges `ipaddr.js` maintains: private, loopback, link-local, shared, 6to4,
 * Teredo, NAT64, ORCHID, documentation, benchmarking, …). An IPv4-mapped IPv6
 * address is judged by the IPv4 inside; IPv6 must lie in 2000::/3, the only space
 * IANA allocates for global unicast, which also excludes IPv4-compatible `::a.b.c.d`,
 * site-local `fec0::/10` and anything not yet assigned.
 */

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** The IPv4 inside an IPv4-mapped IPv6 address, or the address itself. */
function unwrap(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
}

function parse(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  // Only the canonical forms an IP literal can take in a URL or a resolver answer
  // (ipaddr.parse alone also reads `0x7f.1` and `2130706433`).
  if (!ipaddr.IPv4.isValidFourPartDecimal(bare) && !ipaddr.IPv6.isValid(bare)) return undefined;
  return unwrap(ipaddr.parse(bare));
}

export function isPublicAddress(address: string): boolean {
  const ip = parse(address);
  if (!ip || ip.range() !== 'unicast') return false;
  return ip.kind() === 'ipv4' || (ip as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}

export function isIpLiteral(host: string): boolean {
  return parse(host) !== undefined;
}

/** Reads `127.0.0.0/8,::1/128` (SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS); throws on a bad entry. */
export function parseNetworks(text: string): Cidr[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((cidr) => {
      try {
        const [ip, bits] = ipaddr.parseCIDR(cidr);
        return [unwrap(ip), ip.kind() === 'ipv6' && unwrap(ip).kind() === 'ipv4' ? bits - 96 : bits] as Cidr;
      } catch {
        throw new Error(`SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: "${cidr}" is not a CIDR range (e.g. 10.0.0.0/8, fd00::/8)`);
      }
    });
}

export interface AddressPolicy {
  /** Non-public networks webhooks may reach all the same (SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS). */
  allowedNetworks: Cidr[];
}

export function isAllowedAddress(address: string, policy: AddressPolicy): boolean {
  if (isPublicAddress(address)) return true;
  const ip = parse(address);
  return !!ip && policy.allowedNetworks.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
}

/** Every address a host name resolves to (`dns.lookup`: /etc/hosts, then DNS). */
export type Lookup = (host: string) => Promise<string[]>;

export const systemLookup: Lookup = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Resolves `host` once, with a time limit, and checks every address it gives;
 * returns them, in the resolver's order, for the caller to connect to. Errors
 * carry fixed texts: neither the addresses nor the resolver's message reach a
 * Payload (they could map the internal network).
 */
export async function resolveAllowed(host: string, policy: AddressPolicy, lookup: Lookup, timeoutMs: number): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addresses = isIpLiteral(bare) ? [bare] : await withTimeout(lookup(bare), timeoutMs);
  if (addresses.length === 0) throw new OutboundError('DNS_FAILED');
  if (!addresses.every((a) => isAllowedAddress(a, policy))) throw new OutboundError('ADDRESS_REFUSED');
  return addresses;
}

async function withTimeout(resolving: Promise<string[]>, timeoutMs: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OutboundError('DNS_TIMEOUT')), timeoutMs);
  });
  try {
    return await Promise.race([
      resolving.catch((err: unknown) => {
        throw new OutboundError((err as { code?: string }).code === 'ENOTFOUND' ? 'DNS_NOT_FOUND' : 'DNS_FAILED');
      }),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
