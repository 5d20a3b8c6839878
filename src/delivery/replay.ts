import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { EventStatus } from '../db/tables/events';
import { eventUrls, eventView, lockEvent, refreshEventStatus } from '../domain/events';
import { enabledWebhooks } from '../domain/webhooks';
import { ApiError, FieldErrors } from '../errors/api-error';
import { hasPrefix } from '../ids';
import { log } from '../log';
import { markDispatched, pendingTargets, startDelivery } from './dispatch';
import type { PublishDeps } from './publish';

/**
 * Replay: deliver an event again, as a new workflow run; earlier Payloads stay.
 * By default to the URLs not yet acknowledged; with `all` to every webhook of the
 * event's user and mode that is enabled now.
 */
export async function replayEvent(deps: PublishDeps, eventId: string, opts: { all?: boolean } = {}) {
  const row = await deps.db.transaction().execute(async (trx) => {
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
    return trx.updateTable('events').set({ dispatched_at: null }).where('id', '=', event.id).returningAll().executeTakeFirstOrThrow();
  });
  // Started from here, not left to the dispatcher: a replay must replace a run that is
  // still going. If the start fails, the dispatcher starts it on its next pass.
  try {
    const targets = (await pendingTargets(deps.db, [row.id])).get(row.id) ?? [];
    await startDelivery(await deps.temporal(), deps.config, row, targets, { replay: true });
    await markDispatched(deps.db, [row.id]);
  } catch (err) {
    log.warn('replay start deferred to the dispatcher', { event_id: row.id, error: String((err as Error).message).slice(0, 200) });
  }
  return eventView(row, await eventUrls(deps.db, row.id));
}

export interface ReplayFilter {
  status?: EventStatus;
  user_id?: string;
  webhook_id?: string;
  since?: Date;
  until?: Date;
}

export const MAX_BULK_REPLAY = 1000;
const STATUSES = ['in_queue', 'retrying', 'completed', 'failed'];

export function parseReplayFilter(input: Record<string, unknown>): ReplayFilter {
  const errors = new FieldErrors();
  const filter: ReplayFilter = {};
  if (input.status !== undefined) {
    if (STATUSES.includes(input.status as string)) filter.status = input.status as EventStatus;
    else errors.add('status', `must be one of ${STATUSES.join(', ')}`);
  }
  if (input.user_id !== undefined) {
    if (hasPrefix(input.user_id, 'user')) filter.user_id = input.user_id;
    else errors.add('user_id', 'must be a user id');
  }
  if (input.webhook_id !== undefined) {
    if (hasPrefix(input.webhook_id, 'hook')) filter.webhook_id = input.webhook_id;
    else errors.add('webhook_id', 'must be a webhook id');
  }
  for (const field of ['since', 'until'] as const) {
    if (input[field] === undefined) continue;
    const date = typeof input[field] === 'string' ? new Date(input[field] as string) : new Date(NaN);
    if (Number.isNaN(date.getTime())) throw new ApiError('DATE.PARSE.FAILURE', `${field} is not an ISO 8601 datetime.`, [{ field, message: 'must be an ISO 8601 datetime' }]);
    filter[field] = date;
  }
  if (!filter.status && !filter.user_id && !filter.webhook_id && !filter.since && !filter.until) {
    errors.add('status', 'give at least one filter (status, user_id, webhook_id, since, until)');
  }
  errors.throwIfAny('PARAMETER.REQUIRED', 'The replay filter is invalid.');
  return filter;
}

/** Operators: replay every event matching the filter (oldest first, at most MAX_BULK_REPLAY). */
export async function replayMatching(deps: PublishDeps, filter: ReplayFilter) {
  let query = deps.db.selectFrom('events').select('events.id');
  if (filter.status) query = query.where('events.status', '=', filter.status);
  if (filter.user_id) query = query.where('events.user_id', '=', filter.user_id);
  if (filter.since) query = query.where('events.created_at', '>=', filter.since);
  if (filter.until) query = query.where('events.created_at', '<=', filter.until);
  if (filter.webhook_id) {
    const hook = filter.webhook_id;
    query = query.where((eb) => eb.exists(eb.selectFrom('event_deliveries').select('event_id').whereRef('event_deliveries.event_id', '=', 'events.id').where('event_deliveries.webhook_id', '=', hook)));
  }
  const ids = (await query.orderBy('events.id').limit(MAX_BULK_REPLAY).execute()).map((r) => r.id);
  for (const id of ids) await replayEvent(deps, id);
  return { replayed: ids.length, event_ids: ids };
}
