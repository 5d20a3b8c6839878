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
