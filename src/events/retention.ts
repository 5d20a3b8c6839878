import { sql } from 'kysely';
import { anyOf, type Db, type Executor } from '../db/database';
import { firstIdAt } from '../ids';
import type { EventStatus } from './tables';

/**
 * Event retention: events older than the retention (SHIPHOOK_EVENT_RETENTION) go with
 * their delivery rows; an event still being delivered (a status before the end, or a
 * delivery pending) stays until it finishes. Their Payloads go with their partition
 * (payload-partitions.ts). Nothing else of the account refers to an event.
 */
const FINISHED: EventStatus[] = ['completed', 'failed'];

/**
 * Removes up to `limit` finished events created before `cutoff`, in one short
 * transaction; returns how many. Events locked by a delivery or a replay right now
 * are skipped (the next batch or run takes them).
 */
export async function removeExpiredEvents(db: Db, cutoff: Date, limit: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    // Ids sort by creation, so the primary key bounds the scan to the old events.
    const { rows } = await sql<{ id: string }>`
      select e.id from events e
      where e.id < ${firstIdAt('evt', cutoff)} and e.created_at < ${cutoff}
        and e.status = any(${FINISHED}::text[])
        and not exists (select 1 from event_deliveries d where d.event_id = e.id and d.state = 'pending')
      order by e.id
      limit ${limit}
      for update of e skip locked`.execute(trx);
    const ids = rows.map((r) => r.id);
    if (!ids.length) return 0;
    await trx.deleteFrom('event_deliveries').where('event_id', '=', anyOf(ids)).execute();
    await trx.deleteFrom('events').where('id', '=', anyOf(ids)).execute();
    return ids.length;
  });
}

/**
 * Replays and recoveries made before `before` (the event retention's cutoff: their events
 * are gone or going) that no event still carries, up to `limit`: the retention schedule's.
 */
export async function deleteOldReplays(db: Executor, opts: { before: Date; limit: number }): Promise<number> {
  const result = await sql`
    delete from replays where id = any(array(
      select r.id from replays r
      where r.created_at < ${opts.before} and not exists (select 1 from events e where e.replay_id = r.id)
      limit ${opts.limit}))`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
