import { acknowledgedSql } from '../events/payloads';
import { sql } from 'kysely';
import { anyOf, type Db } from '../db/database';
import type { DisablePolicy, HealthState, WebhookRow } from './tables';
import { isoSeconds } from '../format';
import type { Principal } from '../account/principal';
import { ownWebhook } from './webhooks';
import { errorText } from '../errors/error-text';

/**
 * A webhook's health as the API and the portal show it (beyond the API specification, so the
 * Webhook object keeps its wire shape): the run of failures the engine counts (health.ts), the last success and failure, and
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
  const ok = acknowledgedSql();
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
  return {
    object: 'WebhookHealth' as const,
    webhook_id: hook.id,
    status: healthState(hook, lastSuccess?.created_at, lastFailure?.created_at),
    consecutive_failures: hook.consecutive_failures,
    failing_since: hook.failing_since ? isoSeconds(hook.failing_since) : null,
    disabled_at: hook.disabled_at ? isoSeconds(hook.disabled_at) : null,
    disabled_reason: hook.disabled_at ? hook.disabled_reason : null,
    disabled_policy: hook.disabled_at && hook.disabled_policy ? policyView(hook.disabled_policy) : null,
    reenabled_at: hook.reenabled_at ? isoSeconds(hook.reenabled_at) : null,
    last_success_at: lastSuccess ? isoSeconds(lastSuccess.created_at) : null,
    last_failure_at: lastFailure ? isoSeconds(lastFailure.created_at) : null,
    last_failure_response_code: lastFailure?.response_code ?? null,
    last_error: lastFailure ? failureText(lastFailure.response_code, lastFailure.response_body) : null,
    last_24h: { attempts, succeeded, failed: attempts - succeeded },
  };
}

/** `last_error` of an answer without a body. */
export const emptyBodyText = (code: number) => `HTTP ${code}, empty body`;

/**
 * `last_error`: the start of the failed attempt's response body; for an empty one the
 * status and "empty body", and without a response (code 0: a timeout, a refused
 * connection or address) shiphook's reason, recorded as the body `shiphook: <reason>`
 * (activities/deliver.ts).
 */
function failureText(code: number, body: string): string {
  if (code === 0) return errorText(`no response: ${body.replace(/^shiphook: /, '') || 'unknown reason'}`, MAX_ERROR_SHOWN);
  return body.trim() ? errorText(body, MAX_ERROR_SHOWN) : emptyBodyText(code);
}

/**
 * The state the view names. The run of failures the engine counts decides `failing`;
 * attempts from before the last re-enable say nothing about the endpoint now
 * (`waiting` until the next one).
 */
function healthState(hook: WebhookRow, lastSuccess: Date | undefined, lastFailure: Date | undefined): HealthState {
  if (hook.disabled_at) return 'disabled';
  if (hook.failing_since) return 'failing';
  const since = hook.reenabled_at?.getTime() ?? -Infinity;
  const success = lastSuccess && lastSuccess.getTime() >= since;
  const failure = lastFailure && lastFailure.getTime() >= since;
  if (success) return 'healthy';
  if (failure) return 'failing';
  return hook.reenabled_at ? 'waiting' : 'untested';
}

/** A disable policy as the view and the logs show it: `{failures: 20, after: "5d"}`. */
export function policyView(policy: DisablePolicy) {
  return { failures: policy.failures, after: durationText(policy.afterMs) };
}

const UNITS: [string, number][] = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]];

/** A duration in the largest unit that states it whole (the form SHIPHOOK_DISABLE_AFTER takes): `5d`, `90m`, `1500ms`. */
function durationText(ms: number): string {
  const unit = UNITS.find(([, size]) => ms >= size && ms % size === 0);
  return unit ? `${ms / unit[1]}${unit[0]}` : `${ms}ms`;
}
