import { listen } from '../db/listen';
import type { Principal } from '../account/principal';

/** Channel the `shiphook_auth_changed` trigger notifies (migrations/…_auth_change_notifications.ts). */
const AUTH_CHANNEL = 'shiphook_auth';

export interface PrincipalCacheOptions {
  /** A safety net only: entries are dropped on every change to their user or keys (default 60 s). */
  ttlMs: number;
  /** Default 10,000. */
  maxEntries: number;
}

export interface PrincipalCache {
  /** By the key's SHA-256 digest (hex); undefined when unknown, expired, or the cache is off. */
  get(digest: string): Principal | undefined;
  /** Taken before the lookup whose result may be kept. */
  begin(): number;
  /** Keeps a lookup begun at `since`, unless its user changed since then (the result may be stale). */
  set(digest: string, principal: Principal, since: number): void;
  /** Drops everything cached for a user (its keys and its row). */
  forgetUser(userId: string): void;
  close(): Promise<void>;
}

/**
 * Who a key belongs to, kept in this API process so an authenticated request
 * needs one query instead of two. Only keys that authenticated are kept (a key
 * created a moment ago is never "unknown" here). Any change to a user row or to
 * one of its keys, by any process, arrives as a notification from a database
 * trigger and drops that user's entries; a process drops the caller's itself as
 * it answers a write that may change them (api/operation-runner.ts). While the notifications are
 * not arriving (connection lost), nothing is served from the cache.
 */
export function startPrincipalCache(databaseUrl: string, opts: PrincipalCacheOptions = { ttlMs: 60_000, maxEntries: 10_000 }): PrincipalCache {
  const entries = new Map<string, { principal: Principal; expires: number }>();
  const byUser = new Map<string, Set<string>>();
  // Invalidations are numbered: a lookup that began before its user's last one may
  // have read what the change replaced, so it is not kept.
  let sequence = 0;
  let keepNothingBefore = 0;
  const invalidatedAt = new Map<string, number>();
  const forgetUser = (userId: string) => {
    invalidatedAt.set(userId, ++sequence);
    if (invalidatedAt.size > opts.maxEntries) {
      invalidatedAt.clear();
      keepNothingBefore = sequence;
    }
    for (const digest of byUser.get(userId) ?? []) entries.delete(digest);
    byUser.delete(userId);
  };
  const clear = () => {
    keepNothingBefore = ++sequence;
    invalidatedAt.clear();
    entries.clear();
    byUser.clear();
  };
  // Whatever changed while notifications were not arriving is unknown: start empty.
  const listener = listen(databaseUrl, AUTH_CHANNEL, forgetUser, clear);
  return {
    get(digest) {
      if (!listener.listening) return undefined;
      const entry = entries.get(digest);
      if (!entry) return undefined;
      if (entry.expires > Date.now()) return entry.principal;
      entries.delete(digest);
      return undefined;
    },
    begin: () => sequence,
    set(digest, principal, since) {
      if (!listener.listening || since < keepNothingBefore || (invalidatedAt.get(principal.user.id) ?? 0) > since) return;
      if (entries.size >= opts.maxEntries) {
        entries.clear(); // rare: beyond the working set of one process
        byUser.clear();
      }
      entries.set(digest, { principal, expires: Date.now() + opts.ttlMs });
      const digests = byUser.get(principal.user.id) ?? new Set<string>();
      byUser.set(principal.user.id, digests.add(digest));
    },
    forgetUser,
    close: () => listener.close(),
  };
}
