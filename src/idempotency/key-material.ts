import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';

/**
 * What is kept of an Idempotency-Key, and how. The key itself is never stored: rows
 * are found by a digest of it, and the answer they keep (which may hold a secret: an
 * API key's creation answers the key, once) is sealed with AES-256-GCM under a key
 * derived from the Idempotency-Key with HKDF. A copy of the database alone therefore
 * reads no answer; whoever holds the Idempotency-Key could have replayed it anyway.
 * The request is kept as an HMAC under another derived key, so a body that held a
 * password cannot be guessed from its digest.
 */
export interface KeyMaterial {
  /** Finds the row: SHA-256 of the scope and the key. */
  digest: Buffer;
  /** The request's fingerprint: what "the same request" compares. */
  fingerprint(request: string): Buffer;
  seal(answer: unknown): Buffer;
  /** Throws when the sealed text was not sealed under this key (it cannot be: the digest found it). */
  open(sealed: Buffer): unknown;
}

/**
 * Stripe's limit; printable ASCII, so a key is one header value in any client, and no
 * space at either end, which HTTP would strip from the header.
 */
export const KEY_FORMAT = /^[!-~]([ -~]{0,253}[!-~])?$/;
export const KEY_FORMAT_RULE = 'must be 1 to 255 printable ASCII characters, no space at either end (a UUID, say)';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function keyMaterial(scope: string, key: string): KeyMaterial {
  const digest = createHash('sha256').update(`shiphook idempotency\0${scope}\0${key}`, 'utf8').digest();
  const derived = Buffer.from(hkdfSync('sha256', Buffer.from(key, 'utf8'), Buffer.from(scope, 'utf8'), 'shiphook idempotency answer', 64));
  const sealKey = derived.subarray(0, 32);
  const macKey = derived.subarray(32);
  return {
    digest,
    fingerprint: (request) => createHmac('sha256', macKey).update(request, 'utf8').digest(),
    seal(answer) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', sealKey, iv);
      // Wrapped, so an answer without a body (undefined) survives the round trip.
      const text = Buffer.concat([cipher.update(JSON.stringify({ answer }), 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), text]);
    },
    open(sealed) {
      const decipher = createDecipheriv('aes-256-gcm', sealKey, sealed.subarray(0, IV_BYTES));
      decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const text = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      return (JSON.parse(text) as { answer: unknown }).answer;
    },
  };
}

/**
 * The request as "the same request" compares it: method, path and the body as JSON with
 * its keys sorted at every level, so a client that serialises its retry with the keys
 * in another order still sends the same request.
 */
export function canonicalRequest(method: string, path: string, body: unknown): string {
  return `${method} ${path}\n${canonicalJson(body)}`;
}

export const canonicalJson = (value: unknown): string => stringify(value) ?? '';
