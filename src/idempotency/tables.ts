import type { ColumnType } from 'kysely';

/** One Idempotency-Key of one caller: its request's fingerprint and, once answered, the answer. */
export interface IdempotencyKeysTable {
  /** Whose key: `user_…/test`, `user_…/production`, `operator`, or `operator/events` (a batch's per-event keys). */
  scope: string;
  /** SHA-256 of the scope and the key: the key itself is never stored. */
  key_digest: Buffer;
  /** HMAC of the request (method, path, canonical body) under a key derived from the Idempotency-Key. */
  fingerprint: Buffer;
  /** The answer's HTTP status; null while the first request is in flight. */
  status: number | null;
  /** The answer's body, sealed (AES-256-GCM) under a key derived from the Idempotency-Key. */
  answer: Buffer | null;
  /** When the request now answering it started: an in-flight row older than a bound is taken over. */
  locked_at: ColumnType<Date, Date | undefined, Date>;
  expires_at: Date;
}
