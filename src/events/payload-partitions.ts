import { sql } from 'kysely';
import type { Db, Executor } from '../db/database';
import { firstIdAt } from '../ids';
import { log } from '../log';

/**
 * Payloads are partitioned by `created_at` (migrations/2026_11_26_0203_payloads_partitioned.ts):
 * retention drops a whole partition once it is older than the retention, so the table's
 * size stays flat and nothing is deleted row by row. The retention schedule also
 * creates the partitions ahead; a DEFAULT partition catches rows whose range has none.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** How far the clocks of the hosts that make ids and of the database may differ. */
const CLOCK_MARGIN_MS = MINUTE;

/**
 * How wide a partition is: a day, an hour or a minute — the widest of which at least
 * four fit in the retention, so a short retention (a soak test's minutes) still drops
 * partitions and a long one keeps their number small.
 */
export function partitionWidthMs(retentionMs: number): number {
  return [DAY, HOUR].find((w) => w * 4 <= retentionMs) ?? MINUTE;
}

/**
 * How many partitions to keep ahead: a week's worth of days, and at least enough for
 * two runs of the schedule, so one failed or slow run never sends inserts to DEFAULT.
 */
export function partitionsAhead(widthMs: number, everyMs: number): number {
  return Math.max(7, Math.ceil((2 * everyMs) / widthMs) + 1);
}

/**
 * Creates the partitions from the one holding `now` to those the retention keeps ahead,
 * as wide as the retention asks: the worker does it as it starts (a new database has
 * none yet), and every retention run after it.
 */
export function keepPayloadPartitionsAhead(db: Db, retention: { eventRetentionMs: number; retentionEveryMs: number }, now = new Date()): Promise<number> {
  const width = partitionWidthMs(retention.eventRetentionMs);
  return createPayloadPartitions(db, now, width, partitionsAhead(width, retention.retentionEveryMs));
}

export interface PayloadPartition {
  name: string;
  from: Date;
  to: Date;
}

/** The range partitions of payloads (not DEFAULT), oldest first, read from the catalog. */
export async function payloadPartitions(db: Db): Promise<PayloadPartition[]> {
  const { rows } = await sql<PayloadPartition>`
    select c.relname as name, m[1]::timestamptz as "from", m[2]::timestamptz as "to"
    from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
    cross join lateral regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)') as m
    where i.inhparent = 'payloads'::regclass
    order by 2`.execute(db);
  return rows;
}

/** `payloads_p20261126t0000`: the partition's start, UTC. */
export function partitionName(from: Date): string {
  const iso = from.toISOString(); // 2026-11-26T08:15:00.000Z
  return `payloads_p${iso.slice(0, 10).replaceAll('-', '')}t${iso.slice(11, 13)}${iso.slice(14, 16)}`;
}

/**
 * Creates the partitions from the one holding `now` to `ahead` more, skipping any range
 * an existing partition overlaps (the width changed with the retention: the gap, if
 * any, is DEFAULT's). Rows DEFAULT holds for a new range move into it. Each is
 * created detached and attached, which locks the table against neither reads nor
 * writes. Returns how many were created.
 */
export async function createPayloadPartitions(db: Db, now: Date, widthMs: number, ahead: number): Promise<number> {
  const existing = await payloadPartitions(db);
  const first = Math.floor(now.getTime() / widthMs) * widthMs;
  let created = 0;
  for (let i = 0; i <= ahead; i++) {
    const from = new Date(first + i * widthMs);
    const to = new Date(from.getTime() + widthMs);
    if (existing.some((p) => p.from < to && p.to > from)) continue;
    const name = sql.table(partitionName(from));
    const range = sql`for values from (${sql.lit(from.toISOString())}) to (${sql.lit(to.toISOString())})`;
    const done = await withShortLocks(db, `creating payload partition ${partitionName(from)}`, async (trx) => {
      await sql`create table ${name} (like payloads including defaults including constraints)`.execute(trx);
      await sql`
        with moved as (delete from payloads_default where created_at >= ${from} and created_at < ${to} returning *)
        insert into ${name} select * from moved`.execute(trx);
      await sql`alter table payloads attach partition ${name} ${range}`.execute(trx);
    });
    if (done) created++;
  }
  return created;
}

/**
 * Drops the partitions that end before `cutoff` (by a margin) and hold no Payload of an event that
 * still exists: the events sweep ran first, so such an event is one still being
 * delivered, and its partition waits until it has finished and gone. Returns how many
 * were dropped.
 */
export async function dropExpiredPayloadPartitions(db: Db, cutoff: Date): Promise<number> {
  let dropped = 0;
  for (const p of await payloadPartitions(db)) {
    // A Payload is made after its event, so only events made before the partition's end
    // can own one of its rows; ids are made by the API hosts' clocks, created_at by the
    // database's, hence the margin. Past it, the events left before the end are the few
    // still being delivered: the check reads only those.
    const ownersBefore = new Date(p.to.getTime() + CLOCK_MARGIN_MS);
    if (ownersBefore > cutoff) break;
    const { rows } = await sql`
      select 1 from events e
      where e.id < ${firstIdAt('evt', ownersBefore)}
        and exists (select 1 from ${sql.table(p.name)} x where x.event_id = e.id)
      limit 1`.execute(db);
    if (rows.length) continue;
    const done = await withShortLocks(db, `dropping payload partition ${p.name}`, async (trx) => {
      await sql`alter table payloads detach partition ${sql.table(p.name)}`.execute(trx);
      await sql`drop table ${sql.table(p.name)}`.execute(trx);
    });
    if (done) dropped++;
  }
  return dropped;
}

/**
 * Deletes up to `limit` rows of DEFAULT older than `cutoff` whose event is gone (DEFAULT
 * is never dropped: it is the safety net). Returns how many.
 */
export async function sweepDefaultPayloads(db: Db, cutoff: Date, limit: number): Promise<number> {
  const result = await sql`
    delete from payloads_default where ctid = any(array(
      select ctid from payloads_default p
      where p.created_at < ${cutoff} and not exists (select 1 from events e where e.id = p.event_id)
      limit ${limit}))`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Runs a change of the table's partitions in a transaction that waits briefly for its
 * locks: detaching takes the table's strongest lock for an instant, and waiting behind
 * a long query would hold every insert back meanwhile. Returns false (logged; the next
 * run tries again) when the lock did not come.
 */
async function withShortLocks(db: Db, what: string, change: (trx: Executor) => Promise<void>): Promise<boolean> {
  try {
    await db.transaction().execute(async (trx) => {
      await sql`set local lock_timeout = '5s'`.execute(trx);
      await change(trx);
    });
    return true;
  } catch (err) {
    // Another worker starting at the same time created the same partition (its name is its
    // range): the table exists (42P07), or both inserted its catalog row at once (23505).
    if ((err as { code?: string }).code === '42P07' || (err as { code?: string }).code === '23505') return false;
    if ((err as { code?: string }).code !== '55P03') throw err;
    log.warn(`${what}: the table was busy; the next retention run tries again`);
    return false;
  }
}
