import { type Kysely, sql } from 'kysely';
import type { Database, Db } from '../db/database';
import { eventUrls, eventView } from '../events/events';
import { eventStatusOf, lockEvent, refreshEventStatus } from '../events/status';
import { OUTBOX_CHANNEL } from '../events/publish';
import { enabledWebhooks } from '../webhooks/webhooks';
import { ApiError } from '../errors/api-error';
import { hasPrefix, newId } from '../ids';
import { isoMillis } from '../format';
import { log } from '../log';
import { LEASE_MS, markDispatched, pendingTargets, releaseClaims, startDelivery } from './outbox';
import type { TemporalDeps } from './client';
import { MAX_BULK_REPLAY, type ReplayFilter } from './replay.schema';

/**
 * Replay: deliver an event again, as a new workflow run; earlier Payloads stay.
 * By default to the URLs not yet acknowledged; with `all` to every webhook of the
 * event's user and mode that is enabled now. The answer is the event as the replay
 * left it (the URLs it will deliver to as pending), not a later read: the new run
 * may have delivered to local receivers before that read.
 */
export async function replayEvent(db: Db, deps: TemporalDeps, eventId: string, opts: { all?: boolean } = {}) {
  const { row, urls } = await db.transaction().execute(async (trx) => {
    const event = await lockEvent(trx, eventId);
    if (!event) throw new ApiError('NOT_FOUND', 'Event not found.');
    if (opts.all) {
      const hooks = await enabledWebhooks(trx, event.user_id, event.mode);
      if (hooks.length) {
        await trx
          .insertInto('event_deliveries')
          .values(hooks.map((h) => ({ event_id: event.id, webhook_id: h.id, url: h.url })))
          .onConflict((oc) => oc.columns(['event_id', 'webhook_id']).doUpdateSet({ state: 'pending', attempts: 0, url: sql`excluded.url`, updated_at: new Date() }))
          .execute();
      }
    } else {
      await trx.updateTable('event_deliveries').set({ state: 'pending', attempts: 0, updated_at: new Date() }).where('event_id', '=', event.id).where('state', '!=', 'completed').execute();
    }
    await refreshEventStatus(trx, event.id);
    // A replay also clears a dispatch incident (outbox.ts): the operator fixed its cause.
    // Claimed by this replay (a lease, as a dispatcher claims) so no dispatcher starts a
    // second run beside the one started below, which could deliver the same URL twice.
    const claimed = await trx
      .updateTable('events')
      .set({ dispatched_at: null, dispatch_failed_at: null, dispatch_error: null, dispatch_lease_until: sql<Date>`now() + ${LEASE_MS} * interval '1 millisecond'` })
      .where('id', '=', event.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { row: claimed, urls: await eventUrls(trx, event.id) };
  });
  // Started from here, not left to the dispatcher: a replay must replace a run that is
  // still going. If the start fails, the dispatcher starts it on its next pass.
  try {
    const targets = (await pendingTargets(db, [row.id])).get(row.id) ?? [];
    await startDelivery(await deps.temporal(), deps.config, row, targets, { replay: true });
    await markDispatched(db, [row.id]);
  } catch (err) {
    log.warn('replay start deferred to the dispatcher', { event_id: row.id, error: String((err as Error).message).slice(0, 200) });
    await releaseClaims(db, [row.id]).catch(() => undefined); // or its lease runs out
  }
  return eventView(row, urls);
}

/** The events a broad replay takes: those matching every filter given, oldest first, at most MAX_BULK_REPLAY. */
function matching(db: Kysely<Database>, filter: ReplayFilter) {
  let query = db.selectFrom('events').select('events.id');
  if (filter.status) query = query.where('events.status', '=', filter.status);
  if (filter.user_id) query = query.where('events.user_id', '=', filter.user_id);
  if (filter.since) query = query.where('events.created_at', '>=', new Date(filter.since));
  if (filter.until) query = query.where('events.created_at', '<=', new Date(filter.until));
  if (filter.dispatch_failed) query = query.where('events.dispatch_failed_at', 'is not', null);
  if (filter.webhook_id) {
    const hook = filter.webhook_id;
    query = query.where((eb) => eb.exists(eb.selectFrom('event_deliveries').select('event_id').whereRef('event_deliveries.event_id', '=', 'events.id').where('event_deliveries.webhook_id', '=', hook)));
  }
  return query.orderBy('events.id').limit(MAX_BULK_REPLAY);
}

/**
 * Operators: replay every event matching the filter, answered at once. One
 * transaction resets the matching events' unacknowledged deliveries to pending and
 * hands the events back to the outbox with this replay's id (outbox.ts starts
 * them, replacing a run still going); the dispatchers of every worker share the
 * work, and it survives any process dying. Progress: `replayProgress`.
 */
export async function startReplay(db: Db, filter: ReplayFilter) {
  const id = newId('replay');
  const matched = await db.transaction().execute(async (trx) => {
    const ids = (await matching(trx, filter).forNoKeyUpdate().execute()).map((r) => r.id);
    if (ids.length) {
      await sql`
        update event_deliveries set state = 'pending', attempts = 0, updated_at = now()
        where event_id = any(${ids}::text[]) and state <> 'completed'`.execute(trx);
      await sql`
        update events e set
          dispatched_at = null, dispatch_lease_until = null, dispatch_failed_at = null, dispatch_error = null,
          replay_id = ${id}, updated_at = now(),
          status = ${eventStatusOf(sql`(select state, attempts from event_deliveries where event_id = e.id)`)}
        where e.id = any(${ids}::text[])`.execute(trx);
      await sql`select pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx);
    }
    await trx.insertInto('replays').values({ id, filter: JSON.stringify(filter), matched: ids.length }).execute();
    return ids.length;
  });
  log.info('broad replay started', { replay_id: id, matched });
  return (await replayProgress(db, id))!; // committed above
}

/** Dispatch incidents (events whose start Temporal refused), oldest first, for operators. */
export async function dispatchIncidents(db: Db, limit = 100) {
  const rows = await db
    .selectFrom('events')
    .select(['id', 'user_id', 'mode', 'description', 'status', 'dispatch_failed_at', 'dispatch_error'])
    .where('dispatch_failed_at', 'is not', null)
    .orderBy('dispatch_failed_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, dispatch_failed_at: isoMillis(r.dispatch_failed_at!) }));
}

/** Where a broad replay stands: how many of its events the dispatchers have started again. */
export async function replayProgress(db: Db, id: string) {
  if (!hasPrefix(id, 'replay')) return undefined;
  const row = await db.selectFrom('replays').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  const { remaining } = await db.selectFrom('events').select(sql<number>`count(*)::int`.as('remaining')).where('replay_id', '=', id).executeTakeFirstOrThrow();
  return {
    id: row.id,
    object: 'Replay' as const,
    status: remaining === 0 ? ('done' as const) : ('running' as const),
    matched: row.matched,
    /** Events whose delivery workflow was started again (or refused: see dispatch incidents). */
    started: row.matched - remaining,
    remaining,
    capped: row.matched === MAX_BULK_REPLAY,
    filter: row.filter,
    created_at: isoMillis(row.created_at),
  };
}
