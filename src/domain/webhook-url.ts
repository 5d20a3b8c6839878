import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { Config } from '../config';
import type { Mode } from '../db/tables/api-keys';
import { ApiError } from '../errors/api-error';

/**
 * Webhook URL rules (seed 5.6, 8: HTTPS only). A URL without a scheme gets
 * `https://`. Without SHIPHOOK_ALLOW_INSECURE_WEBHOOKS, both modes require https
 * and a public target: loopback, private, link-local, shared, multicast and
 * reserved addresses are refused at creation (IP literals, `localhost`) and again
 * at delivery time on the resolved addresses (DNS can point anywhere later).
 */

const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96],
] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv6');

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    const v4 = ipv4Mapped(address);
    if (v4) return !NON_PUBLIC.check(v4, 'ipv4');
    return !NON_PUBLIC.check(address, 'ipv6');
  }
  return !NON_PUBLIC.check(address, 'ipv4');
}

/** `::ffff:127.0.0.1` and its hex form `::ffff:7f00:1` as dotted IPv4. */
function ipv4Mapped(address: string): string | undefined {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

const invalid = (message: string) => new ApiError('WEBHOOK.INVALID', 'The webhook URL is invalid.', [{ field: 'url', message }]);

export function normalizeWebhookUrl(input: unknown, _mode: Mode, config: Config): string {
  if (typeof input !== 'string' || input.trim() === '') throw invalid('cannot be blank');
  const text = input.trim();
  if (text.length > 2048) throw invalid('must be at most 2048 characters');
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw invalid('is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('must use https');
  if (!url.hostname) throw invalid('must name a host');
  if (config.allowInsecureWebhooks) return url.toString();
  if (url.protocol !== 'https:') throw invalid('must use https');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && !isPublicAddress(host))) {
    throw invalid('must point to a public address');
  }
  if (isIP(host) === 0 && !host.includes('.')) throw invalid('must be a fully qualified host name');
  return url.toString();
}

/** Delivery-time check of where the host resolves now. Throws a plain Error (a failed attempt). */
export async function assertDeliverableAddress(rawUrl: string, config: Config): Promise<void> {
  if (config.allowInsecureWebhooks) return;
  const url = new URL(rawUrl);
  if (url.protocol !== 'https:') throw new Error('webhook URL must use https');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [{ address: host }] : await lookup(host, { all: true });
  const bad = addresses.find((a) => !isPublicAddress(a.address));
  if (bad) throw new Error(`webhook host resolves to a non-public address (${bad.address})`);
}

/** `https://user:***@host/…`: credentials never shown to anyone but the receiver. */
export function maskUrl(rawUrl: string): string {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return rawUrl;
  }
  if (!url.password) return rawUrl;
  url.password = '***';
  return url.toString().replace('%2A%2A%2A@', '***@');
}

/** The URL without credentials, and the Basic Authorization header they stand for. */
export function basicAuthFromUrl(rawUrl: string): { url: string; authorization?: string } {
  const url = new URL(rawUrl);
  if (!url.username && !url.password) return { url: rawUrl };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return { url: url.toString(), authorization: `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}` };
}
