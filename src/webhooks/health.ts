import { sql } from 'kysely';
import { anyOf, type Db } from '../db/database';
import type { HealthState, WebhookRow } from './tables';
import { isoSeconds } from '../format';
import type { Principal } from '../account/principal';
import { ownWebhook } from './webhooks';

/**
 * A webhook's health (beyond the API specification, so the Webhook object keeps its wire shape):
 * the run of failures the engine counts (the API specification, 3.2), the last success and failure, and
 * the attempts of the last 24 hours, from the attempt log (Payloads). Read for many
 * webhooks at once (the portal's list) in three grouped queries.
 */
export const HEALTH_WINDOW_HOURS = 24;
const MAX_ERROR_SHOWN = 500;

export type WebhookHealth = ReturnType<typeof healthView>;

/** GET /webhooks/:id/health */
export async function webhookHealth(db: Db, who: Principal, id: string): Promise<WebhookHealth> {
  const hook = await ownWebhook(db, who, id);
  return (await healthOf(db, [hook])).get(hook.id)!;
}

/** The health of some webhooks (rows the caller already scoped), by webhook id. */
export async function healthOf(db: Db, hooks: WebhookRow[]): Promise<Map<string, WebhookHealth>> {
  const ids = hooks.map((h) => h.id);
  const ok = sql<boolean>`response_code between 200 and 299`;
  const [successes, failures, windows] = ids.length
    ? await Promise.all([
        db.selectFrom('payloads').distinctOn('webhook_id').select(['webhook_id', 'created_at']).where('webhook_id', '=', anyOf(ids)).where(ok).orderBy('webhook_id').orderBy('id', 'desc').execute(),
        db
          .selectFrom('payloads')
          .distinctOn('webhook_id')
          .select(['webhook_id', 'created_at', 'response_code', 'response_body'])
          .where('webhook_id', '=', anyOf(ids))
          .where(sql<boolean>`not (${ok})`)
          .orderBy('webhook_id')
          .orderBy('id', 'desc')
          .execute(),
        db
          .selectFrom('payloads')
          .select(['webhook_id', sql<number>`count(*)`.as('attempts'), sql<number>`count(*) filter (where ${ok})`.as('succeeded')])
          .where('webhook_id', '=', anyOf(ids))
          .where('created_at', '>=', new Date(Date.now() - HEALTH_WINDOW_HOURS * 3_600_000))
          .groupBy('webhook_id')
          .execute(),
      ])
    : [[], [], []];
  const byId = <T extends { webhook_id: string }>(rows: T[]) => new Map(rows.map((r) => [r.webhook_id, r]));
  const [success, failure, window] = [byId(successes), byId(failures), byId(windows)];
  return new Map(hooks.map((h) => [h.id, healthView(h, success.get(h.id), failure.get(h.id), window.get(h.id))]));
}

function healthView(
  hook: WebhookRow,
  lastSuccess: { created_at: Date } | undefined,
  lastFailure: { created_at: Date; response_code: number; response_body: string } | undefined,
  window: { attempts: number; succeeded: number } | undefined,
) {
  const attempts = Number(window?.attempts ?? 0);
  const succeeded = Number(window?.succeeded ?? 0);
  const status: HealthState = hook.disabled_at ? 'disabled' : hook.failing_since ? 'failing' : lastSuccess ? 'healthy' : lastFailure ? 'failing' : 'untested';
  return {
    object: 'WebhookHealth' as const,
    webhook_id: hook.id,
    status,
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
