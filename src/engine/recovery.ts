import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { Config } from '../config';
import type { Database, Db } from '../db/database';
import { ownedBy, type Principal } from '../account/principal';
import { ApiError } from '../errors/api-error';
import { isoMillis } from '../format';
import { hasPrefix, newId } from '../ids';
import { log } from '../log';
import { ownWebhook, subscribedTypes } from '../webhooks/webhooks';
import type { EventType } from '../events/types';
import type { RecoveryView } from './recovery.schema';
import { markForReplay, remainingOf } from './replay';
import { MAX_BULK_REPLAY } from './replay.schema';
import { endReplays } from './replay-end';

/**
 * Recovery ("redeliver what my endpoint missed since T"): every event of the caller's
 * user and mode created in [since, until) whose delivery to this webhook has not
 * succeeded (failed, or still pending or retrying) is delivered to this webhook again,
 * and only to it. Who may recover what, and the engine's part: a replay narrowed to
 * the webhook (replay.ts `markForReplay`), answered at once, which the workers'
 * dispatchers share; `recoveryProgress` tells how far it got.
 */

/** The window as asked: `until` left out means now. */
export interface RecoveryWindow {
  since: Date;
  until?: Date | null;
}

/**
 * Checks a recovery of the caller's webhook and starts it (answered at once: the
 * handle's `status` says when every matched event was started again).
 * - another account's or mode's webhook, or a deleted one: 404;
 * - a disabled webhook: 422, re-enable it first (it would refuse every redelivery);
 * - `until` later than now is now (nothing after the request is missed yet);
 * - `since` must be before `until`, at most `recoveryMaxWindowMs` before it: 422 naming `since`.
 */
export async function recoverWebhook(db: Db, config: Pick<Config, 'recoveryMaxWindowMs'>, who: Principal, webhookId: string, window: RecoveryWindow): Promise<RecoveryView> {
  const hook = await ownWebhook(db, who, webhookId);
  if (hook.disabled_at) {
    throw new ApiError('WEBHOOK.INVALID', 'This webhook is disabled, so nothing can be redelivered to it: re-enable it first (PATCH /v2/webhooks/:id), then recover.');
  }
  const now = new Date();
  const until = window.until && window.until < now ? window.until : now;
  if (window.since >= until) {
    throw new ApiError('PARAMETER.FORBIDDEN', 'The recovery window is empty.', [{ field: 'since', message: 'must be earlier than until (and than now)' }]);
  }
  if (until.getTime() - window.since.getTime() > config.recoveryMaxWindowMs) {
    throw new ApiError('PARAMETER.FORBIDDEN', 'The recovery window is too wide.', [
      { field: 'since', message: `must be at most ${describeSpan(config.recoveryMaxWindowMs)} before until (SHIPHOOK_RECOVERY_MAX_WINDOW); recover a longer stretch in several windows` },
    ]);
  }
  return startRecovery(db, who, { webhookId: hook.id, types: subscribedTypes(hook), since: window.since, until });
}

/** What one recovery takes: the caller's events created in [since, until), by their delivery to the webhook. */
interface RecoveryScope {
  webhookId: string;
  /** The types its subscription takes now (null: every type): of the events it has no delivery to, only these. */
  types: EventType[] | null;
  since: Date;
  until: Date;
}

/**
 * The events a recovery takes: the caller's in the window, oldest first, at most MAX_BULK_REPLAY, whose
 * delivery to the webhook did not succeed — failed or still retrying, or never tried
 * because the webhook was disabled when the event was published (it has no delivery to
 * it at all; a test event for another webhook aside, events from before the webhook, and
 * events of types its subscription does not take now: it would not have received them).
 * An event it has a delivery to is taken whatever it subscribes to now: it was sent there.
 */
function recoverable(db: Kysely<Database>, who: Principal, scope: RecoveryScope) {
  const toHook = (eb: ExpressionBuilder<Database, 'events'>) =>
    eb.selectFrom('event_deliveries').select('event_id').whereRef('event_deliveries.event_id', '=', 'events.id').where('event_deliveries.webhook_id', '=', scope.webhookId);
  return db
    .selectFrom('events')
    .select('events.id')
    .where(ownedBy(who, { table: 'events' }))
    .where('events.created_at', '>=', scope.since)
    .where('events.created_at', '<', scope.until)
    .where((eb) =>
      eb.or([
        eb.exists(toHook(eb).where('event_deliveries.state', '!=', 'completed')),
        eb.and([
          eb.not(eb.exists(toHook(eb))),
          eb('events.test', '=', false),
          eb('events.created_at', '>=', eb.selectFrom('webhooks').select('webhooks.created_at').where('webhooks.id', '=', scope.webhookId)),
          ...(scope.types ? [eb('events.description', 'in', scope.types)] : []),
        ]),
      ]),
    )
    .orderBy('events.id')
    .limit(MAX_BULK_REPLAY);
}

/**
 * A replay of the scope's events narrowed to one webhook, whose unacknowledged deliveries
 * to it are reset; their other URLs are left as they are.
 */
async function startRecovery(db: Db, who: Principal, scope: RecoveryScope): Promise<RecoveryView> {
  const id = newId('replay');
  const window = { since: isoMillis(scope.since), until: isoMillis(scope.until) };
  const matched = await db.transaction().execute(async (trx) => {
    const ids = (await recoverable(trx, who, scope).forNoKeyUpdate().execute()).map((r) => r.id);
    // The events it never had a delivery to get one now (to its URL as it is today).
    if (ids.length) {
      await sql`
        insert into event_deliveries (event_id, webhook_id, url)
        select e.id, w.id, w.url from events e, webhooks w where e.id = any(${ids}::text[]) and w.id = ${scope.webhookId}
        on conflict (event_id, webhook_id) do nothing`.execute(trx);
    }
    await markForReplay(trx, id, ids, scope.webhookId);
    await trx
      .insertInto('replays')
      .values({ id, filter: JSON.stringify({ webhook_id: scope.webhookId, ...window }), matched: ids.length, user_id: who.user.id, mode: who.mode, webhook_id: scope.webhookId })
      .execute();
    return ids.length;
  });
  log.info('recovery started', { recovery_id: id, webhook_id: scope.webhookId, user_id: who.user.id, mode: who.mode, ...window, matched });
  await endReplays(db, [id]); // nothing matched: ended at once
  return (await recoveryProgress(db, who, id))!; // committed above
}

/** Where a recovery of the caller's stands; undefined for anyone else's. */
export async function recoveryProgress(db: Db, who: Principal, id: string): Promise<RecoveryView | undefined> {
  if (!hasPrefix(id, 'replay')) return undefined;
  const row = await db.selectFrom('replays').selectAll().where('id', '=', id).where(ownedBy(who)).executeTakeFirst();
  if (!row?.webhook_id) return undefined;
  const { since, until } = row.filter as { since: string; until: string };
  const remaining = await remainingOf(db, id);
  const { undelivered } = await db
    .selectFrom('event_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select(sql<number>`count(*)::int`.as('undelivered'))
    .where('d.webhook_id', '=', row.webhook_id)
    .where('d.state', '!=', 'completed')
    .where(ownedBy(who, { table: 'e' }))
    .where('e.created_at', '>=', new Date(since))
    .where('e.created_at', '<', new Date(until))
    .executeTakeFirstOrThrow();
  return {
    id: row.id,
    object: 'Recovery',
    webhook_id: row.webhook_id,
    since,
    until,
    status: remaining === 0 ? 'done' : 'running',
    matched: row.matched,
    started: row.matched - remaining,
    remaining,
    capped: row.matched === MAX_BULK_REPLAY,
    undelivered,
    created_at: isoMillis(row.created_at),
    ended_at: row.ended_at ? isoMillis(row.ended_at) : null,
  };
}

/** "14 days", "36 hours", "90 minutes": the largest whole unit. */
function describeSpan(ms: number): string {
  const units: [string, number][] = [['day', 86_400_000], ['hour', 3_600_000], ['minute', 60_000], ['second', 1000]];
  for (const [name, size] of units) {
    if (ms % size === 0 && ms >= size) return `${ms / size} ${name}${ms === size ? '' : 's'}`;
  }
  return `${ms} ms`;
}
