import type { Config } from '../config';
import type { Mode } from '../account/tables';
import { ApiError } from '../errors/api-error';
import { isIpLiteral, type Lookup, resolveAllowed, systemLookup } from '../outbound/address-guard';
import { OutboundError } from '../outbound/outbound-error';

/**
 * Webhook URL rules (the API specification, 5.6 and 8: HTTPS only). A URL without a scheme gets
 * `https://`. Both modes require https (unless SHIPHOOK_WEBHOOK_ALLOW_HTTP) and a
 * host whose every address is public or in SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: IP
 * literals and `localhost` are judged at once, names are resolved. A name that does
 * not resolve (yet) is accepted; every delivery resolves it again, inside the
 * connection (src/outbound/), and refuses what is not allowed then.
 */

const invalid = (message: string) => new ApiError('WEBHOOK.INVALID', 'The webhook URL is invalid.', [{ field: 'url', message }]);
/** Creation waits at most this long for DNS. */
const CREATION_DNS_MS = 2000;

export async function normalizeWebhookUrl(input: unknown, _mode: Mode, config: Config, lookup: Lookup = systemLookup): Promise<string> {
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
  if (url.protocol !== 'https:' && !config.webhooks.allowHttp) throw invalid('must use https');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const isLocalName = host === 'localhost' || host.endsWith('.localhost');
  if (!isLocalName && !isIpLiteral(host) && !host.includes('.')) throw invalid('must be a fully qualified host name');
  try {
    await resolveAllowed(host, config.webhooks, lookup, CREATION_DNS_MS);
  } catch (err) {
    if (!(err instanceof OutboundError)) throw err;
    // `localhost` never reaches the resolver's network; refuse it even when it does not resolve.
    if (err.reason === 'ADDRESS_REFUSED' || isLocalName) throw invalid('must point to a public address');
  }
  return url.toString();
}

/**
 * The URL as its owner sees it (webhook views, Payloads): the whole user-info part
 * (`TOKEN@`, `user:password@`) shown as `***@`; the query string kept.
 */
export const maskUrl = (rawUrl: string): string => masked(rawUrl, false);

/**
 * The URL as anyone else sees it — other receivers of the account (`pending_urls`,
 * `completed_urls` in delivered bodies), operators (logs, everything Temporal
 * stores): user-info and the query string (`?token=…` is a common credential) masked.
 */
export const redactUrl = (rawUrl: string): string => masked(rawUrl, true);

function masked(rawUrl: string, hideQuery: boolean): string {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return '(invalid URL)';
  }
  const userInfo = url.username || url.password ? '***@' : '';
  const query = !url.search ? '' : hideQuery ? '?***' : url.search;
  const fragment = hideQuery ? '' : url.hash;
  return `${url.protocol}//${userInfo}${url.host}${url.pathname}${query}${fragment}`;
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
