import { anyOf, type Db, type Executor } from '../db/database';
import type { DisablePolicy } from './tables';
import { notDeleted } from '../db/soft-delete';

/**
 * A webhook's health rules (the API specification, 3.2): the run of failed attempts the
 * engine counts in the webhook row, its end, and disabling the webhook (a 410 Gone at
 * once, a sustained run under the policy configured now); and what the webhook's health
 * workflow is told when the webhook changes. What the API and the portal show of it is
 * health-view.ts.
 */

/**
 * What the webhook's health workflow (src/engine) is told when its webhook changes:
 * handed in by the operations, so this folder never reaches Temporal itself. Each
 * resolves true when a running workflow heard it.
 */
export interface HealthWorkflows {
  /** Re-enabled: the watch starts afresh (a new run, the current policy). */
  restart(webhookId: string): Promise<boolean>;
  /** Deleted: the workflow ends. */
  end(webhookId: string): Promise<boolean>;
}

/** A run of failed attempts: when it started and how many in a row have failed (1 = the last one started it). */
export interface FailureRun {
  failingSince: Date;
  consecutiveFailures: number;
}

/**
 * The statement that counts a failed attempt to each of `ids`, returning each one's
 * run; also a CTE of the statement that records later attempts (events/deliveries.ts).
 */
export function countFailures(db: Executor, ids: readonly string[], at: Date) {
  return db
    .updateTable('webhooks')
    .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1), failing_since: eb.fn.coalesce('failing_since', eb.val(at)) }))
    .where('id', '=', anyOf(ids))
    // A deleted webhook has no run: a failure that raced its deletion must not start its health workflow again.
    .where(notDeleted())
    .returning(['id', 'failing_since', 'consecutive_failures']);
}

/** A row `countFailures` returned, as a run. */
export function failureRun(row: { failing_since: Date | null; consecutive_failures: number }): FailureRun | undefined {
  return row.failing_since ? { failingSince: row.failing_since, consecutiveFailures: row.consecutive_failures } : undefined;
}

/** Counts a failed attempt on its own. Returns the run it belongs to. */
export async function recordFailure(db: Executor, id: string, at: Date): Promise<FailureRun | undefined> {
  const row = await countFailures(db, [id], at).executeTakeFirst();
  return row && failureRun(row);
}

/** A successful attempt ends the run; true when there was one (the health workflow is told). */
export async function recordSuccess(db: Executor, id: string): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({ failing_since: null, consecutive_failures: 0 })
    .where('id', '=', id)
    .where('failing_since', 'is not', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** When a run of failures is looked at again while it has not lasted long enough: at most this long, so a changed policy applies within it. */
export const RECHECK_MS = 60 * 60 * 1000;

/**
 * What the health workflow does next about a run of failures: the webhook was
 * disabled now; the run ended (a success, an update, already disabled); the
 * webhook is deleted (the workflow ends); or look again in `checkInMs`.
 */
export type HealthDecision = { verdict: 'disabled' | 'run ended' | 'deleted' } | { verdict: 'not yet'; checkInMs: number };

/**
 * Disables the webhook if the run of failures that started at `since` is still
 * going, has at least `policy.failures` attempts and has lasted at least
 * `policy.afterMs` (the policy as configured now, stored with the reason).
 */
export async function disableIfSustained(db: Db, id: string, since: Date, policy: DisablePolicy, now: Date): Promise<HealthDecision> {
  const disabled = await db
    .updateTable('webhooks')
    .set({ disabled_at: now, disabled_reason: 'sustained_failures', disabled_policy: JSON.stringify(policy) })
    .where('id', '=', id)
    .where('failing_since', '=', since)
    .where('failing_since', '<=', new Date(now.getTime() - policy.afterMs))
    .where('consecutive_failures', '>=', policy.failures)
    .where('disabled_at', 'is', null)
    .where(notDeleted())
    .executeTakeFirst();
  if (disabled.numUpdatedRows > 0n) return { verdict: 'disabled' };
  const row = await db.selectFrom('webhooks').select(['failing_since', 'disabled_at', 'deleted_at']).where('id', '=', id).executeTakeFirst();
  if (!row || row.deleted_at) return { verdict: 'deleted' };
  if (row.disabled_at || row.failing_since?.getTime() !== since.getTime()) return { verdict: 'run ended' };
  // Not long enough yet: look again when the span is over. Or it is, but too few attempts
  // failed so far: the failure that reaches the threshold signals the workflow, which
  // looks again then; the recheck only covers a signal lost on the way.
  const due = since.getTime() + policy.afterMs - now.getTime();
  return { verdict: 'not yet', checkInMs: due > 0 ? Math.min(due, RECHECK_MS) : RECHECK_MS };
}

/** Disables the webhook because its endpoint answered 410 Gone, if it is still enabled; true when it changed something. */
export async function disableGoneWebhook(db: Executor, id: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({ disabled_at: at, disabled_reason: 'endpoint_gone', disabled_policy: null })
    .where('id', '=', id)
    .where('disabled_at', 'is', null)
    .where(notDeleted())
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
