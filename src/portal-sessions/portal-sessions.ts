import { randomBytes } from 'node:crypto';
import type { Config } from '../config';
import { sql } from 'kysely';
import type { Db, Executor } from '../db/database';
import { isoSeconds } from '../format';
import { newId } from '../ids';
import { ownerOf, type Principal } from '../account/principal';
import { keyDigest } from '../account/secrets';
import { notDeleted } from '../db/soft-delete';

/**
 * Portal sessions (beyond the API specification; Svix's App Portal, Convoy's portal links): a link
 * that opens the webhook portal for the calling key's user and mode, valid for a
 * bounded time (SHIPHOOK_PORTAL_SESSION_TTL, default 1 h), usable without the API key
 * itself — the key never reaches the browser. The link carries a random token and
 * works once: its first visit exchanges it for a session (a second random token, in an
 * HttpOnly cookie) that lasts the TTL from then. Only SHA-256 digests of both tokens
 * are stored. A session ends when it expires, or at once when the key that opened it
 * is disabled or deleted, or its user is deleted.
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

/** A token of a link or of a session: 32 random bytes, base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export type PortalPrincipal = Principal & { expiresAt: Date };

/** What the first visit of a link gives: the session, or why there is none. */
export type LinkExchange = { session: PortalPrincipal; token: string } | { refused: 'used' | 'invalid' };

/**
 * The first visit of a link: marks it used and opens a session for the TTL from now,
 * whose new token only the browser's cookie holds. The claim is conditional on the
 * link being unused, so two visits racing for one link cannot both win. A link already
 * used, expired, tampered with, or whose key or user is gone, opens nothing.
 */
export async function exchangeLink(db: Db, config: Pick<Config, 'portalSessionTtlMs'>, linkToken: string): Promise<LinkExchange> {
  if (!TOKEN.test(linkToken)) return { refused: 'invalid' };
  const link = await liveSessions(db).where('s.token_digest', '=', keyDigest(linkToken)).where('s.link_used_at', 'is', null).executeTakeFirst();
  if (link) {
    const token = randomBytes(32).toString('base64url');
    const claimed = await db
      .updateTable('portal_sessions')
      .set({ link_used_at: new Date(), session_digest: keyDigest(token), expires_at: new Date(Date.now() + config.portalSessionTtlMs) })
      .where('id', '=', link.session_id)
      .where('link_used_at', 'is', null)
      .returning('expires_at')
      .executeTakeFirst();
    if (claimed) return { session: principalOf({ ...link, expires_at: claimed.expires_at }), token };
  }
  const known = await db.selectFrom('portal_sessions').select('link_used_at').where('token_digest', '=', keyDigest(linkToken)).executeTakeFirst();
  return { refused: known?.link_used_at ? 'used' : 'invalid' };
}

/** The principal a session cookie's token stands for, while it is valid; undefined for anything else. */
export async function sessionPrincipal(db: Db, token: string): Promise<PortalPrincipal | undefined> {
  if (!TOKEN.test(token)) return undefined;
  const row = await liveSessions(db).where('s.session_digest', '=', keyDigest(token)).executeTakeFirst();
  return row && principalOf(row);
}

/** Signing out: the session ends now, whoever holds its cookie. */
export async function endSession(db: Db, token: string): Promise<void> {
  await db.updateTable('portal_sessions').set({ expires_at: new Date() }).where('session_digest', '=', keyDigest(token)).execute();
}

/** Sessions (or unused links) not expired whose key is active and whose user exists, with that user. */
function liveSessions(db: Db) {
  return db
    .selectFrom('portal_sessions as s')
    .innerJoin('api_keys as k', 'k.id', 's.api_key_id')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .selectAll('u')
    .select(['s.id as session_id', 's.mode as session_mode', 's.api_key_id', 's.expires_at'])
    .where('s.expires_at', '>', new Date())
    .where('k.active', '=', true)
    .where(notDeleted('k'))
    .where(notDeleted('u'));
}

function principalOf(row: Awaited<ReturnType<ReturnType<typeof liveSessions>['executeTakeFirstOrThrow']>>): PortalPrincipal {
  const { session_id: _id, session_mode, api_key_id, expires_at, ...user } = row;
  return { user, mode: session_mode, keyId: api_key_id, expiresAt: expires_at };
}

/** Portal links and sessions that ended before `before`, up to `limit`: the retention schedule's. */
export async function deleteEndedPortalSessions(db: Executor, opts: { before: Date; limit: number }): Promise<number> {
  const result = await sql`
    delete from portal_sessions where id = any(array(select id from portal_sessions where expires_at < ${opts.before} limit ${opts.limit}))`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
