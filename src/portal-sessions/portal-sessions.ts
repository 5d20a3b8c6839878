import { randomBytes } from 'node:crypto';
import type { Config } from '../config';
import type { Db } from '../db/database';
import { isoSeconds } from '../format';
import { newId } from '../ids';
import { ownerOf, type Principal } from '../account/principal';
import { keyDigest } from '../account/secrets';

/**
 * Portal sessions (beyond the API specification; Svix's App Portal, Convoy's portal links): a link
 * that opens the webhook portal for the calling key's user and mode, valid for a
 * bounded time (SHIPHOOK_PORTAL_SESSION_TTL, default 1 h), usable without the API key
 * itself — the key never reaches the browser. The link carries a random token; only
 * its SHA-256 digest is stored. A session ends when it expires, or at once when the
 * key that opened it is disabled or deleted, or its user is deleted.
 */
export async function createPortalSession(db: Db, config: Pick<Config, 'portalSessionTtlMs'>, who: Principal, origin: string) {
  const token = randomBytes(32).toString('base64url');
  const expires = new Date(Date.now() + config.portalSessionTtlMs);
  await db
    .insertInto('portal_sessions')
    .values({ id: newId('ps'), token_digest: keyDigest(token), ...ownerOf(who), api_key_id: who.keyId, expires_at: expires })
    .execute();
  return { object: 'PortalSession' as const, url: `${origin}/portal/login/${token}`, expires_at: isoSeconds(expires) };
}

/** The principal a portal token stands for, while it is valid; undefined for anything else. */
export async function portalPrincipal(db: Db, token: string): Promise<(Principal & { expiresAt: Date }) | undefined> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
  const row = await db
    .selectFrom('portal_sessions as s')
    .innerJoin('api_keys as k', 'k.id', 's.api_key_id')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .selectAll('u')
    .select(['s.mode as session_mode', 's.api_key_id', 's.expires_at'])
    .where('s.token_digest', '=', keyDigest(token))
    .where('s.expires_at', '>', new Date())
    .where('k.active', '=', true)
    .where('k.deleted_at', 'is', null)
    .where('u.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { session_mode, api_key_id, expires_at, ...user } = row;
  return { user, mode: session_mode, keyId: api_key_id, expiresAt: expires_at };
}
