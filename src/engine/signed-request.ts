import { createHmac } from 'node:crypto';
import { BRAND_PREFIX, RESERVED_HEADERS } from '../webhooks/custom-headers';
import type { CustomHeader } from '../webhooks/tables';
import { basicAuthFromUrl, maskUrl } from '../webhooks/url';
import { VERSION } from '../version';

/**
 * The request one delivery attempt sends, with every header rule in one place
 * (COMPATIBILITY.md "Outbound webhooks"): the webhook's custom headers except the
 * names the service sets itself, then Content-Type, Accept and User-Agent; Standard
 * Webhooks' `webhook-id` (the event id, also the receiver's idempotency key) and
 * `webhook-timestamp`; with a secret, `webhook-signature` (during a rotation's grace
 * period signed with the new and the previous secret) and `X-Hmac-Signature`; what a
 * receiver routes and traces by without parsing the body, brand-prefixed so no custom
 * header can forge it: `X-Shiphook-Event-Type`, `X-Shiphook-Attempt` and
 * `X-Shiphook-Delivery-Id` (the attempt's Payload id), and `X-Shiphook-Test` on test
 * events; `Authorization: Basic` from credentials in the URL, which is sent without
 * them. Pure: the caller gives the time and the attempt.
 */

/** The event as sent: its id, its type (`description`), its delivery body (`deliveryBody`), and whether it is a test event. */
export interface OutgoingEvent {
  id: string;
  type: string;
  body: string;
  test: boolean;
}

/** This attempt: when it is sent, its number (1 for the first), and the id its Payload will be recorded with. */
export interface OutgoingAttempt {
  sentAt: Date;
  number: number;
  payloadId: string;
}

export interface SigningWebhook {
  /** As stored: may carry `user:password@` for Basic auth. */
  url: string;
  customHeaders: CustomHeader[];
  secret: string | null;
  /** A rotated-out secret still in its grace period (signs beside `secret`). */
  previousSecret: string | null;
}

export interface SignedRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** What the attempt log keeps: the same request with the URL's and Authorization's credentials masked. */
  logged: { url: string; headers: Record<string, string> };
}

export function signedRequest(event: OutgoingEvent, webhook: SigningWebhook, attempt: OutgoingAttempt): SignedRequest {
  const { url, authorization } = basicAuthFromUrl(webhook.url);
  const headers: Record<string, string> = {};
  for (const h of webhook.customHeaders) if (!isServiceHeader(h.name)) headers[h.name] = h.value;
  headers['Content-Type'] = 'application/json';
  headers['Accept'] = 'application/json';
  headers['User-Agent'] = `shiphook/${VERSION}`;
  const timestamp = Math.floor(attempt.sentAt.getTime() / 1000);
  headers['webhook-id'] = event.id;
  headers['webhook-timestamp'] = String(timestamp);
  if (webhook.secret) {
    const secrets = webhook.previousSecret ? [webhook.secret, webhook.previousSecret] : [webhook.secret];
    headers['webhook-signature'] = standardSignature(event.id, timestamp, event.body, secrets);
    headers['X-Hmac-Signature'] = hmacSignature(event.body, webhook.secret);
  }
  headers['X-Shiphook-Event-Type'] = event.type;
  headers['X-Shiphook-Attempt'] = String(attempt.number);
  headers['X-Shiphook-Delivery-Id'] = attempt.payloadId;
  if (event.test) headers['X-Shiphook-Test'] = 'true';
  if (authorization) headers['Authorization'] = authorization;
  return {
    url,
    headers,
    body: event.body,
    logged: { url: maskUrl(webhook.url), headers: authorization ? { ...headers, Authorization: 'Basic ***' } : headers },
  };
}

/**
 * A name the service sets, whose value wins over a custom header's. Brand-prefixed names
 * are refused at creation; skipping them here too means a stored one in another case can
 * never go out beside the service's (a receiver would read both values joined).
 */
function isServiceHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED_HEADERS.has(lower) || lower.startsWith(BRAND_PREFIX);
}

/**
 * The delivery body of an event (the API's Event object with `result`). Integral
 * weights are written as `15.0`: the official node client rewrites them so before
 * hashing, and would reject our signature otherwise.
 */
export function deliveryBody(event: unknown): string {
  return JSON.stringify(event).replace(/("weight":\s*)(\d+)(\s*)(?=,|\})/g, '$1$2.0$3');
}

/** `X-Hmac-Signature`: `hmac-sha256-hex=<hex>` over the exact body bytes, keyed by the NFKD-normalised secret. */
export function hmacSignature(body: string, secret: string): string {
  const key = Buffer.from(secret.normalize('NFKD'), 'utf8');
  return `hmac-sha256-hex=${createHmac('sha256', key).update(body, 'utf8').digest('hex')}`;
}

/**
 * Standard Webhooks (standardwebhooks.com) signing key of a secret: a `whsec_<base64>`
 * secret (what rotation generates) is its decoded bytes, so receivers pass it as it is
 * to any Standard Webhooks library; any other secret is its NFKD-normalised UTF-8
 * bytes, as for `X-Hmac-Signature` (receivers pass `whsec_` + base64 of those bytes).
 */
export function standardWebhookKey(secret: string): Buffer {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret);
  return match ? Buffer.from(match[1]!, 'base64') : Buffer.from(secret.normalize('NFKD'), 'utf8');
}

/**
 * The `webhook-signature` header: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` for
 * each secret, space-separated (during a rotation's grace period: new, then previous).
 */
function standardSignature(id: string, timestampSeconds: number, body: string, secrets: string[]): string {
  const signed = `${id}.${timestampSeconds}.${body}`;
  return secrets.map((s) => `v1,${createHmac('sha256', standardWebhookKey(s)).update(signed, 'utf8').digest('base64')}`).join(' ');
}
