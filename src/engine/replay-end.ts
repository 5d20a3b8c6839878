import { sql } from 'kysely';
import type { Executor } from '../db/database';
import { log } from '../log';
import { reportRecoveryFinished } from '../operational-webhooks/delivery-changes';
import { MAX_BULK_REPLAY } from './replay.schema';

/**
 * The end of a broad replay or a recovery: the moment the last of its events was
 * started again (a dispatcher cleared its mark: outbox.ts `markDispatched`, or
 * `markDispatchFailed` for a start Temporal refused). From then on its deliveries go
 * on as any event's do; a recovery's handle counts what is still undelivered.
 * Checked by whoever cleared a mark, after committing; the row's `ended_at` is set
 * by one of them only (a second update finds it set), so the end is logged once.
 */
export async function endReplays(db: Executor, replayIds: (string | null)[]): Promise<void> {
  const ids = [...new Set(replayIds.filter((id): id is string => id !== null))];
  if (ids.length === 0) return;
  const end = async (trx: Executor) => {
    const { rows } = await sql<{ id: string; webhook_id: string | null; filter: { since?: string; until?: string }; matched: number; created_at: Date; ended_at: Date }>`
      update replays r set ended_at = now()
      where r.id = any(${ids}::text[]) and r.ended_at is null
        and not exists (select 1 from events e where e.replay_id = r.id)
      returning r.id, r.webhook_id, r.filter, r.matched, r.created_at, r.ended_at`.execute(trx);
    for (const r of rows) {
      if (r.webhook_id) {
        const { since = '', until = '' } = r.filter;
        await reportRecoveryFinished(trx, { id: r.id, webhookId: r.webhook_id, since, until, matched: r.matched, capped: r.matched === MAX_BULK_REPLAY, createdAt: r.created_at, endedAt: r.ended_at });
      }
    }
    return rows;
  };
  // A recovery's end is reported in the transaction that marks it ended: once.
  const rows = db.isTransaction ? await end(db) : await db.transaction().execute(end);
  for (const r of rows) {
    const took = { matched: r.matched, duration_ms: r.ended_at.getTime() - r.created_at.getTime() };
    if (r.webhook_id) log.info('recovery ended: every matched event was started again', { recovery_id: r.id, webhook_id: r.webhook_id, ...took });
    else log.info('broad replay ended: every matched event was started again', { replay_id: r.id, ...took });
  }
}
