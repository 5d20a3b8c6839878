import { createHmac } from 'node:crypto';

/**
 * The delivery body and its signature (COMPATIBILITY.md "Outbound webhooks").
 * Integral weights are written as `15.0`: the official node client rewrites them
 * so before hashing, and would reject our signature otherwise.
 */
export function deliveryBody(event: unknown): string {
  return JSON.stringify(event).replace(/("weight":\s*)(\d+)(\s*)(?=,|\})/g, '$1$2.0$3');
}

/** `hmac-sha256-hex=<hex>` over the exact body bytes, keyed by the NFKD-normalised secret. */
export function signature(body: string, secret: string): string {
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
export function standardSignature(id: string, timestampSeconds: number, body: string, secrets: string[]): string {
  const signed = `${id}.${timestampSeconds}.${body}`;
  return secrets.map((s) => `v1,${createHmac('sha256', standardWebhookKey(s)).update(signed, 'utf8').digest('base64')}`).join(' ');
}
