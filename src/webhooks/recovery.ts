import type { Config } from '../config';
import type { Db } from '../db/database';
import type { Mode } from '../account/tables';
import type { Principal } from '../account/principal';
import { ApiError } from '../errors/api-error';
import type { RecoveryView } from './recovery.schema';
import { ownWebhook } from './webhooks';

/**
 * Recovery ("redeliver what my endpoint missed since T"): every event of the caller's
 * user and mode created in [since, until) whose delivery to this webhook has not
 * succeeded (failed, or still pending or retrying) is delivered to this webhook again,
 * and only to it. The rules of who may recover what are here; the engine
 * (engine/replay.ts `startRecovery`, handed in as `start`) carries it out as a replay
 * narrowed to the webhook, so the workers' dispatchers share the work.
 */

/** What one recovery takes: the webhook's deliveries of events created in [since, until). */
export interface RecoveryScope {
  webhookId: string;
  userId: string;
  mode: Mode;
  since: Date;
  until: Date;
}

export type StartRecovery = (db: Db, scope: RecoveryScope) => Promise<RecoveryView>;

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
export async function recoverWebhook(db: Db, config: Pick<Config, 'recoveryMaxWindowMs'>, who: Principal, webhookId: string, window: RecoveryWindow, start: StartRecovery): Promise<RecoveryView> {
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
  return start(db, { webhookId: hook.id, userId: who.user.id, mode: who.mode, since: window.since, until });
}

/** "14 days", "36 hours", "90 minutes": the largest whole unit. */
function describeSpan(ms: number): string {
  const units: [string, number][] = [['day', 86_400_000], ['hour', 3_600_000], ['minute', 60_000], ['second', 1000]];
  for (const [name, size] of units) {
    if (ms % size === 0 && ms >= size) return `${ms / size} ${name}${ms === size ? '' : 's'}`;
  }
  return `${ms} ms`;
}
