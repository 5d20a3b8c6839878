import { sql } from 'kysely';
import type { Config } from '../config';
import type { Db, Executor } from '../db/database';
import { ownedBy, ownerOf, type Principal } from '../account/principal';
import { ApiError, notFound } from '../errors/api-error';
import { isoSeconds } from '../format';
import { hasPrefix, newId } from '../ids';
import { log } from '../log';
import { LISTENER_ANSWERS_CHANNEL, LISTENER_REQUESTS_CHANNEL, listenerUrl } from '../outbound/listener-transport';
import type { z } from '../schema';
import { newWebhookSecret } from '../webhooks/secret-rotation';
import type { ListenerCreate } from './listeners.schema';

/**
 * Listeners (`shiphook listen`): a developer's machine receiving the user's events of
 * one mode while its CLI is connected. A listener is a row of `webhooks` (id `lst_…`,
 * URL `listen://lst_…`, its subscription and secret), so publish, the delivery workflow,
 * the retry schedule and the Payloads treat it as a webhook, and a row of `listeners`
 * with when a stream of it was last open. It goes when its CLI deletes it (Ctrl-C), or
 * when no stream of it was open for the grace period (SHIPHOOK_LISTENER_GRACE): the
 * stream's own timer (stream.ts), and the retention schedule for one whose api stopped.
 */

/** Per user and mode: each terminal running `shiphook listen` is one. */
export const MAX_LISTENERS_PER_MODE = 10;

/** The caller's live listeners with their webhook row's subscription. */
function listenersOf(db: Executor, who: Principal) {
  return db
    .selectFrom('listeners as l')
    .innerJoin('webhooks as w', 'w.id', 'l.id')
    .selectAll('l')
    .select('w.event_types')
    .where(ownedBy(who, { table: 'l' }));
}

type ListenerWithTypes = Awaited<ReturnType<ReturnType<typeof listenersOf>['executeTakeFirstOrThrow']>>;

export function listenerView(row: ListenerWithTypes) {
  return {
    id: row.id,
    object: 'Listener' as const,
    mode: row.mode,
    url: listenerUrl(row.id),
    forward_to: row.forward_to,
    event_types: row.event_types,
    created_at: isoSeconds(row.created_at),
    last_seen_at: isoSeconds(row.last_seen_at),
  };
}

/** POST /listeners `{"listener": {forward_to?, event_types?, secret?, mode?}}` → the listener and its secret (shown this once). */
export async function createListener(db: Db, config: Config, who: Principal, input: z.output<typeof ListenerCreate>) {
  const mode = input.mode ?? 'test';
  if (mode !== who.mode) {
    throw new ApiError('MODE.CONFLICT', who.mode === 'production'
      ? 'This is a production API key: a listener of it forwards live events. Say so with "mode": "production" (`shiphook listen --live`), or use a test key.'
      : 'This is a test API key: it listens to test events only.', [{ field: 'mode', message: `must be the key's mode (${who.mode})` }]);
  }
  // A vanished CLI's listener whose api stopped before its timer: gone now, not at the next retention run.
  await removeAbandonedListeners(db, config, { userId: who.user.id });
  const secret = input.secret || newWebhookSecret();
  const id = newId('lst');
  const row = await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`listeners:${who.user.id}:${who.mode}`}, 0))`.execute(trx);
    const { count } = await trx.selectFrom('listeners').select((eb) => eb.fn.countAll<number>().as('count')).where(ownedBy(who)).executeTakeFirstOrThrow();
    if (Number(count) >= MAX_LISTENERS_PER_MODE) {
      throw new ApiError('FORBIDDEN', `At most ${MAX_LISTENERS_PER_MODE} listeners per user and mode: stop one (Ctrl-C in its terminal), or wait until a vanished one expires (${Math.round(config.listeners.graceMs / 1000)} s).`);
    }
    await trx
      .insertInto('webhooks')
      .values({ id, ...ownerOf(who), url: listenerUrl(id), webhook_secret: secret, custom_headers: '[]', event_types: input.event_types ?? null })
      .execute();
    await trx.insertInto('listeners').values({ id, ...ownerOf(who), forward_to: input.forward_to ?? null }).execute();
    return listenersOf(trx, who).where('l.id', '=', id).executeTakeFirstOrThrow();
  });
  log.info('listener created', { listener_id: id, user_id: who.user.id, mode: who.mode });
  return { ...listenerView(row), secret };
}

/**
 * GET /listeners: an abandoned one is removed first. Counted from its last heartbeat, a grace
 * period and a heartbeat: an open stream marks it every heartbeat, so none is removed before its
 * stream has been gone a grace period, even when its server has not noticed the drop yet.
 */
export async function listListeners(db: Db, config: Pick<Config, 'listeners'>, who: Principal) {
  const { graceMs, heartbeatMs } = config.listeners;
  await removeAbandonedListeners(db, { listeners: { ...config.listeners, graceMs: graceMs + heartbeatMs } }, { userId: who.user.id });
  return { listeners: (await listenersOf(db, who).orderBy('l.id', 'desc').execute()).map(listenerView) };
}

/** The caller's listener of the key's mode; 404 otherwise. */
export async function ownListener(db: Executor, who: Principal, id: string) {
  const row = hasPrefix(id, 'lst') ? await listenersOf(db, who).where('l.id', '=', id).executeTakeFirst() : undefined;
  if (!row) throw notFound('Listener not found (it was removed, or its grace period ran out: start `shiphook listen` again).');
  return row;
}

/** DELETE /listeners/:id: removed at once (Ctrl-C). */
export async function deleteListener(db: Db, who: Principal, id: string): Promise<void> {
  await ownListener(db, who, id);
  await removeListener(db, id, 'deleted');
}

/** Marks the listener seen now (its stream is open, or just closed); false when it is gone. */
export async function touchListener(db: Executor, id: string): Promise<boolean> {
  const row = await db.updateTable('listeners').set({ last_seen_at: new Date() }).where('id', '=', id).returning('id').executeTakeFirst();
  return row !== undefined;
}

/**
 * Removes the listeners no stream has kept seen for the grace period: all of them (the
 * retention schedule), one (its stream's timer) or one user's (before a creation).
 * Returns how many.
 */
export async function removeAbandonedListeners(db: Db, config: Pick<Config, 'listeners'>, scope: { id?: string; userId?: string; limit?: number } = {}): Promise<number> {
  let query = db
    .selectFrom('listeners')
    .select('id')
    .where('last_seen_at', '<', new Date(Date.now() - config.listeners.graceMs))
    .orderBy('last_seen_at')
    .limit(scope.limit ?? 1000);
  if (scope.id) query = query.where('id', '=', scope.id);
  if (scope.userId) query = query.where('user_id', '=', scope.userId);
  const ids = (await query.execute()).map((r) => r.id);
  for (const id of ids) await removeListener(db, id, 'expired');
  return ids.length;
}

/**
 * One transaction: its queued requests go (the attempts waiting for them hear it and
 * fail, as to a deleted webhook), its row, and its webhook row is deleted as a webhook
 * is, so a delivery still planned for it stops; its stream hears it and ends.
 */
async function removeListener(db: Db, id: string, why: 'deleted' | 'expired'): Promise<void> {
  const removed = await db.transaction().execute(async (trx) => {
    await sql`select pg_notify(${LISTENER_ANSWERS_CHANNEL}, id) from listener_requests where listener_id = ${id}`.execute(trx);
    const row = await trx.deleteFrom('listeners').where('id', '=', id).returning('id').executeTakeFirst();
    await trx.updateTable('webhooks').set({ deleted_at: new Date() }).where('id', '=', id).where('deleted_at', 'is', null).execute();
    await sql`select pg_notify(${LISTENER_REQUESTS_CHANNEL}, ${id})`.execute(trx);
    return row !== undefined;
  });
  if (removed) log.info(why === 'deleted' ? 'listener deleted' : 'listener expired', { listener_id: id });
}
