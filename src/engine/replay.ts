import { type Kysely, sql } from 'kysely';
import type { Database, Db, Executor } from '../db/database';
import { eventUrls, eventView, objectIdOf } from '../events/events';
import { eventStatusOf, lockEvent, refreshEventStatus } from '../events/status';
import { OUTBOX_CHANNEL } from '../events/publish';
import { enabledWebhooks, subscribesTo } from '../webhooks/webhooks';
import { ApiError } from '../errors/api-error';
import { hasPrefix, newId } from '../ids';
import { isoMillis } from '../format';
import { log } from '../log';
import { LEASE_MS, markDispatched, pendingTargets, releaseClaims, startDelivery } from './outbox';
import type { TemporalDeps } from './client';
import { MAX_BULK_REPLAY, type ReplayFilter } from './replay.schema';
import { endReplays } from './replay-end';
import { notDeleted } from '../db/soft-delete';
import { errorText } from '../errors/error-text';

/**
 * A delivery row `d` whose webhook can still be delivered to: not deleted, not disabled.
 * A replay resets only these (the workflow would stop the others at once), and one that
 * has none to reset says so instead of answering `in_queue` and falling back to `failed`.
 */
export const LIVE = sql<boolean>`exists (select 1 from webhooks w where w.id = d.webhook_id and ${notDeleted('w')} and w.disabled_at is null)`;

/** The 422 of a replay that would deliver nothing: every undelivered URL belongs to a deleted or disabled webhook. */
export const noLiveWebhook = (detail: string) =>
  new ApiError('WEBHOOK.INVALID', `No live webhook to deliver to: ${detail} Re-enable the webhook (PATCH /v2/webhooks/:id) and replay again.`);

/**
 * Replay: deliver an event again, as a new workflow run; earlier Payloads stay.
 * By default to the URLs not yet acknowledged (whatever their webhooks subscribe to now:
 * the event was delivered to them); with `all` to every webhook of the event's user and
 * mode that is enabled now and subscribes to its type now, acknowledged or not (with
 * `webhookId`, to that one only: `shiphook events resend --webhook`). The answer is the event as the replay
 * left it (the URLs it will deliver to as pending), not a later read: the new run
 * may have delivered to local receivers before that read.
 */
export async function replayEvent(db: Db, deps: TemporalDeps, eventId: string, opts: { all?: boolean; webhookId?: string } = {}) {
  const { row, urls } = await db.transaction().execute(async (trx) => {
    const event = await lockEvent(trx, eventId);
    if (!event) throw new ApiError('NOT_FOUND', 'Event not found.');
    if (opts.all || opts.webhookId) {
      const enabled = (await enabledWebhooks(trx, event.user_id, event.mode)).filter((h) => !opts.webhookId || h.id === opts.webhookId);
      if (enabled.length === 0) {
        throw opts.webhookId
          ? new ApiError('WEBHOOK.INVALID', `No webhook to deliver to: ${opts.webhookId} is not an enabled webhook or listener of this account and mode.`, [{ field: 'webhook_id', message: 'no enabled webhook or listener of this account and mode has this id' }])
          : noLiveWebhook('no webhook of this account and mode is enabled.');
      }
      const hooks = enabled.filter((h) => subscribesTo(h, event.description));
      if (hooks.length === 0) {
        const none = opts.webhookId ? `${opts.webhookId} does not subscribe` : 'no enabled webhook of this account and mode subscribes';
        throw new ApiError('WEBHOOK.INVALID', `No webhook to deliver to: ${none} to ${event.description} now. Add it to a webhook's event_types (PATCH /v2/webhooks/:id) and replay again.`);
      }
      await trx
        .insertInto('event_deliveries')
        .values(hooks.map((h) => ({ event_id: event.id, webhook_id: h.id, url: h.url })))
        .onConflict((oc) => oc.columns(['event_id', 'webhook_id']).doUpdateSet({ state: 'pending', attempts: 0, url: sql`excluded.url`, updated_at: new Date() }))
        .execute();
    } else {
      // Nothing unacknowledged at all: the new run ends at once, as before. Something
      // unacknowledged but nowhere live to send it (a dispatch incident aside, whose
      // replay settles it): refused, and the transaction leaves everything as it was.
      const { rows } = await sql<{ live: boolean }>`select ${LIVE} as live from event_deliveries d where d.event_id = ${event.id} and d.state <> 'completed'`.execute(trx);
      if (rows.length > 0 && !rows.some((r) => r.live) && !event.dispatch_failed_at) {
        throw noLiveWebhook('the URLs this event has not delivered to belong to deleted or disabled webhooks (to deliver to the webhooks enabled now, replay with {"all": true}).');
      }
      await sql`update event_deliveries d set state = 'pending', attempts = 0, updated_at = now() where d.event_id = ${event.id} and d.state <> 'completed' and ${LIVE}`.execute(trx);
    }
    await refreshEventStatus(trx, event.id);
    // A replay also clears a dispatch incident (outbox.ts): the operator fixed its cause.
    // Claimed by this replay (a lease, as a dispatcher claims) so no dispatcher starts a
    // second run beside the one started below, which could deliver the same URL twice.
    // Marked as a replay (the event's own id, unless a broad replay's mark is on it): if
    // the start below fails, the dispatcher's start still replaces the open run.
    const claimed = await trx
      .updateTable('events')
      .set({ dispatched_at: null, dispatch_failed_at: null, dispatch_error: null, dispatch_lease_until: sql<Date>`now() + ${LEASE_MS} * interval '1 millisecond'`, replay_id: sql<string>`coalesce(replay_id, ${event.id})` })
      .where('id', '=', event.id)
      .returningAll()
      .returning(objectIdOf.as('object_id'))
      .executeTakeFirstOrThrow();
    return { row: claimed, urls: await eventUrls(trx, event.id) };
  });
  // Started from here, not left to the dispatcher: a replay must replace a run that is
  // still going. If the start fails, the dispatcher starts it on its next pass.
  try {
    const targets = (await pendingTargets(db, [row.id])).get(row.id) ?? [];
    await startDelivery(await deps.temporal(), deps.config, row, targets, { replay: true });
    await markDispatched(db, [row.id]);
    // Started at once, so this one line is its start and its end.
    log.info('event replayed', { event_id: row.id, user_id: row.user_id, mode: row.mode, webhooks: targets.length, all: opts.all === true, ...(opts.webhookId ? { webhook_id: opts.webhookId } : {}) });
    // It may have carried a broad replay's mark, now cleared.
    await endReplays(db, [row.replay_id]);
  } catch (err) {
    log.info('replay start deferred to the dispatcher', { event_id: row.id, error: errorText(err) });
    await releaseClaims(db, [row.id]).catch(() => undefined); // or its lease runs out
  }
  return eventView(row, urls);
}

/** The events a broad replay's filter matches: those matching every filter given (`startReplay` orders and caps them). */
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
  return query;
}

/**
 * Of those, the events a replay can deliver: a dispatch incident (its replay settles it),
 * one with nothing unacknowledged (its run ends at once), or one with an unacknowledged
 * URL of a live webhook. Left out: those whose every unacknowledged URL is dead.
 */
const DELIVERABLE = sql<boolean>`(
  events.dispatch_failed_at is not null
  or not exists (select 1 from event_deliveries d where d.event_id = events.id and d.state <> 'completed')
  or exists (select 1 from event_deliveries d where d.event_id = events.id and d.state <> 'completed' and ${LIVE}))`;

/**
 * Resets the unacknowledged deliveries to live webhooks of these events (only those to
 * `webhookId` when given) and hands the events back to the outbox marked with this
 * replay's id (outbox.ts starts them, replacing a run still going; the dispatchers of
 * every worker share the work, and it survives any process dying).
 */
export async function markForReplay(trx: Executor, replayId: string, ids: string[], webhookId?: string): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    update event_deliveries d set state = 'pending', attempts = 0, updated_at = now()
    where d.event_id = any(${ids}::text[]) and d.state <> 'completed' and ${LIVE}
      ${webhookId ? sql`and d.webhook_id = ${webhookId}` : sql``}`.execute(trx);
  await sql`
    update events e set
      dispatched_at = null, dispatch_lease_until = null, dispatch_failed_at = null, dispatch_error = null,
      replay_id = ${replayId}, updated_at = now(),
      status = ${eventStatusOf(sql`(select state, attempts from event_deliveries where event_id = e.id)`)}
    where e.id = any(${ids}::text[])`.execute(trx);
  await sql`select pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx);
}

/**
 * Operators: replay every event matching the filter, answered at once (`markForReplay`).
 * Events whose every unacknowledged URL belongs to a deleted or disabled webhook are
 * left as they are; when the filter matches only such events, the replay is refused.
 * Progress: `replayProgress`; the end: replay-end.ts.
 */
export async function startReplay(db: Db, filter: ReplayFilter) {
  const id = newId('replay');
  const matched = await db.transaction().execute(async (trx) => {
    const ids = (await matching(trx, filter).where(DELIVERABLE).orderBy('events.id').limit(MAX_BULK_REPLAY).forNoKeyUpdate().execute()).map((r) => r.id);
    if (ids.length === 0 && (await matching(trx, filter).limit(1).execute()).length > 0) {
      throw noLiveWebhook('every event the filter matches has its undelivered URLs on deleted or disabled webhooks.');
    }
    await markForReplay(trx, id, ids);
    await trx.insertInto('replays').values({ id, filter: JSON.stringify(filter), matched: ids.length }).execute();
    return ids.length;
  });
  log.info('broad replay started', { replay_id: id, matched });
  await endReplays(db, [id]); // nothing matched: ended at once
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

/** Events still carrying a replay's mark: not yet started again. */
export async function remainingOf(db: Db, id: string): Promise<number> {
  const { remaining } = await db.selectFrom('events').select(sql<number>`count(*)::int`.as('remaining')).where('replay_id', '=', id).executeTakeFirstOrThrow();
  return remaining;
}

/** Where a broad replay (or, for operators, a recovery) stands: how many of its events the dispatchers have started again. */
export async function replayProgress(db: Db, id: string) {
  if (!hasPrefix(id, 'replay')) return undefined;
  const row = await db.selectFrom('replays').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  const remaining = await remainingOf(db, id);
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
