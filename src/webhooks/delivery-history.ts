import { acknowledgedSql } from '../events/payloads';
import { sql } from 'kysely';
import type { Executor } from '../db/database';
import { isoMillis } from '../format';
import { ownedBy, type Principal } from '../account/principal';
import { HEALTH_WINDOW_HOURS } from './health-view';

/**
 * A webhook's recent delivery attempts and its success rate hour by hour over the
 * health window, from the attempt log (Payloads), for the portal's webhook page. Both
 * read payloads through the webhook row, scoped by the caller's user and mode.
 */
export const RECENT_ATTEMPTS = 20;
const HOUR_MS = 3_600_000;

export interface RecentAttempt {
  id: string;
  event_id: string;
  created_at: string;
  response_code: number;
  total_time: number;
}

export interface HourOfAttempts {
  /** Start of the hour. */
  hour: string;
  attempts: number;
  succeeded: number;
}

const ok = acknowledgedSql('p');
/** Hours since the epoch: UTC hours whatever the session's time zone. */
const hourOf = sql<string>`floor(extract(epoch from p.created_at) / 3600)::bigint`;

/** The last attempts to the caller's webhook, newest first. */
export async function recentAttempts(db: Executor, who: Principal, webhookId: string, limit = RECENT_ATTEMPTS): Promise<RecentAttempt[]> {
  const rows = await db
    .selectFrom('payloads as p')
    .innerJoin('webhooks as w', 'w.id', 'p.webhook_id')
    .select(['p.id', 'p.event_id', 'p.created_at', 'p.response_code', 'p.total_time'])
    .where('p.webhook_id', '=', webhookId)
    .where(ownedBy(who, { table: 'w' }))
    .orderBy('p.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, created_at: isoMillis(r.created_at) }));
}

/** Attempts and successes of each hour of the health window, oldest first, the current hour last (empty hours included). */
export async function hourlyAttempts(db: Executor, who: Principal, webhookId: string, now = new Date()): Promise<HourOfAttempts[]> {
  const last = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const first = last - (HEALTH_WINDOW_HOURS - 1) * HOUR_MS;
  const rows = await db
    .selectFrom('payloads as p')
    .innerJoin('webhooks as w', 'w.id', 'p.webhook_id')
    .select([hourOf.as('hour'), sql<string>`count(*)`.as('attempts'), sql<string>`count(*) filter (where ${ok})`.as('succeeded')])
    .where('p.webhook_id', '=', webhookId)
    .where(ownedBy(who, { table: 'w' }))
    .where('p.created_at', '>=', new Date(first))
    .groupBy(hourOf)
    .execute();
  const byHour = new Map(rows.map((r) => [Number(r.hour) * HOUR_MS, r]));
  return Array.from({ length: HEALTH_WINDOW_HOURS }, (_, i) => {
    const hour = first + i * HOUR_MS;
    const row = byHour.get(hour);
    return { hour: new Date(hour).toISOString(), attempts: Number(row?.attempts ?? 0), succeeded: Number(row?.succeeded ?? 0) };
  });
}
