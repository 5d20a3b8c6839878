import { sql } from 'kysely';
import type { Db } from '../db/database';
import { isoSeconds } from '../format';
import type { Principal } from './principal';
import { ownWebhook } from './webhooks';

/**
 * A webhook's health (beyond the seed, so the Webhook object keeps its wire shape):
 * the run of failures the engine counts (seed 3.2), the last success and failure, and
 * the attempts of the last 24 hours, from the attempt log (Payloads).
 */
export const HEALTH_WINDOW_HOURS = 24;
const MAX_ERROR_SHOWN = 500;

export async function webhookHealth(db: Db, who: Principal, id: string) {
  const hook = await ownWebhook(db, who, id);
  const ok = sql<boolean>`response_code between 200 and 299`;
  const [lastSuccess, lastFailure, window] = await Promise.all([
    db.selectFrom('payloads').select(['created_at']).where('webhook_id', '=', hook.id).where(ok).orderBy('id', 'desc').limit(1).executeTakeFirst(),
    db.selectFrom('payloads').select(['created_at', 'response_code', 'response_body']).where('webhook_id', '=', hook.id).where(sql<boolean>`not (${ok})`).orderBy('id', 'desc').limit(1).executeTakeFirst(),
    db
      .selectFrom('payloads')
      .select([sql<number>`count(*)`.as('attempts'), sql<number>`count(*) filter (where ${ok})`.as('succeeded')])
      .where('webhook_id', '=', hook.id)
      .where('created_at', '>=', new Date(Date.now() - HEALTH_WINDOW_HOURS * 3_600_000))
      .executeTakeFirstOrThrow(),
  ]);
  const attempts = Number(window.attempts);
  const succeeded = Number(window.succeeded);
  return {
    object: 'WebhookHealth' as const,
    webhook_id: hook.id,
    status: hook.disabled_at ? 'disabled' : hook.failing_since ? 'failing' : lastSuccess ? 'healthy' : lastFailure ? 'failing' : 'untested',
    consecutive_failures: hook.consecutive_failures,
    failing_since: hook.failing_since ? isoSeconds(hook.failing_since) : null,
    disabled_at: hook.disabled_at ? isoSeconds(hook.disabled_at) : null,
    last_success_at: lastSuccess ? isoSeconds(lastSuccess.created_at) : null,
    last_failure_at: lastFailure ? isoSeconds(lastFailure.created_at) : null,
    last_failure_response_code: lastFailure?.response_code ?? null,
    last_error: lastFailure ? lastFailure.response_body.slice(0, MAX_ERROR_SHOWN) : null,
    last_24h: { attempts, succeeded, failed: attempts - succeeded },
  };
}
