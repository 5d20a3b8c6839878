import type { Executor } from '../db/database';
import { isoMillis } from '../format';
import { emitOperational, webhookSubject } from './emit';

/**
 * The delivery state changes the platform hears of: a delivery that used its last attempt
 * (`delivery.exhausted`) and a recovery whose every event was started again
 * (`recovery.finished`).
 */

/** A delivery's last attempt, as the attempt reported it. */
export interface ExhaustedDelivery {
  webhookId: string;
  attempt: number;
  responseCode: number;
}

/**
 * `delivery.exhausted` for each delivery of the event whose last attempt just failed.
 * Recorded before this runs, so an activity retried in between makes one more attempt
 * (to a delivery that already failed) and comes here again: once per delivery and
 * delivery run (`runId`: a replay is a new run, whose exhaustion is news again).
 */
export async function reportExhausted(db: Executor, event: { id: string; description: string }, deliveries: readonly ExhaustedDelivery[], runId: string): Promise<void> {
  for (const delivery of deliveries) {
    await emitOperational(db, 'delivery.exhausted', async (trx) => {
      const hook = await webhookSubject(trx, delivery.webhookId);
      if (!hook) return undefined;
      return {
        about: hook,
        eventId: event.id,
        details: { event_type: event.description, attempts: delivery.attempt, response_code: delivery.responseCode },
        once: `delivery.exhausted:${event.id}:${delivery.webhookId}:${runId}`,
      };
    });
  }
}

/** A recovery as it ended (src/engine/replay-end.ts). */
export interface FinishedRecovery {
  id: string;
  webhookId: string;
  /** The window it covered (ISO 8601). */
  since: string;
  until: string;
  matched: number;
  /** It matched as many events as one recovery takes: a later part of the window may be left. */
  capped: boolean;
  createdAt: Date;
  endedAt: Date;
}

/** `recovery.finished`, in the transaction that marked the recovery ended (once). */
export async function reportRecoveryFinished(trx: Executor, recovery: FinishedRecovery): Promise<void> {
  await emitOperational(trx, 'recovery.finished', async () => {
    const hook = await webhookSubject(trx, recovery.webhookId);
    if (!hook) return undefined;
    const details = {
      recovery_id: recovery.id,
      since: recovery.since,
      until: recovery.until,
      matched: recovery.matched,
      capped: recovery.capped,
      started_at: isoMillis(recovery.createdAt),
      ended_at: isoMillis(recovery.endedAt),
      duration_ms: recovery.endedAt.getTime() - recovery.createdAt.getTime(),
    };
    return { about: hook, eventId: null, details };
  });
}
