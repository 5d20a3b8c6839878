import type { Db, Executor } from '../db/database';
import { isoMillis, isoSeconds } from '../format';
import { disableGoneWebhook, disableIfSustained, type HealthDecision, recordSuccess } from '../webhooks/health';
import { policyView } from '../webhooks/health-view';
import type { DisablePolicy } from '../webhooks/tables';
import { emitOperational, operationalEndpointsTake, webhookSubject } from './emit';

/**
 * The webhook state changes the platform hears of (`webhook.*`, `secret.rotated`): each rule
 * of src/webhooks/ run in one transaction with its operational event, so the event is
 * emitted once per change. The start of a run of failures is the exception: it is counted
 * by the statement that records an attempt, so it is reported after it, once per run by its
 * key, by whichever notices it first (the attempt's follow-up, or the health workflow).
 */

const iso = (d: Date | null | undefined) => (d ? isoMillis(d) : null);
/** The last attempt is looked for this far before the change it explains (partitions older than that are not read). */
const LAST_ATTEMPT_SLACK_MS = 60_000;

/**
 * The webhook's last recorded attempt, made at most a little before `since`: its Payload,
 * event, number and status, and shiphook's reason when no response came. Never the
 * response body: an endpoint may echo the request's headers (its secret's signatures, its
 * custom header values).
 */
async function lastAttempt(trx: Executor, webhookId: string, since: Date) {
  const row = await trx
    .selectFrom('payloads')
    .select(['id', 'event_id', 'attempt', 'response_code', 'response_body', 'created_at'])
    .where('webhook_id', '=', webhookId)
    .where('created_at', '>=', new Date(since.getTime() - LAST_ATTEMPT_SLACK_MS))
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return { eventId: null, last_response: null };
  const response = {
    payload_id: row.id,
    event_id: row.event_id,
    attempt: row.attempt,
    response_code: row.response_code,
    error: row.response_code === 0 && row.response_body.startsWith('shiphook: ') ? row.response_body.slice(0, 200) : null,
    at: isoMillis(row.created_at),
  };
  return { eventId: row.event_id, last_response: response };
}

/**
 * `webhook.failing` for the run of failures that began at `since`, if it is still going and
 * was not reported yet.
 */
export async function reportFailing(db: Executor, webhookId: string, since: Date): Promise<void> {
  await emitOperational(db, 'webhook.failing', async (trx) => {
    const hook = await webhookSubject(trx, webhookId);
    // A run that ended first (a success, an update, a disable) has nothing left to report.
    if (!hook || hook.deleted_at || hook.disabled_at || hook.failing_since?.getTime() !== since.getTime()) return undefined;
    const { eventId, last_response } = await lastAttempt(trx, webhookId, since);
    return { about: hook, eventId, details: { failing_since: iso(since), consecutive_failures: hook.consecutive_failures, last_response }, once: `webhook.failing:${webhookId}:${since.getTime()}` };
  });
}

/** A success ends the run of failures (webhooks/health.ts `recordSuccess`) and reports `webhook.recovered`; true when there was a run. */
export async function recordRecovery(db: Db, webhookId: string): Promise<boolean> {
  // Nobody listening: the rule's one statement, without a transaction around it.
  if (!(await operationalEndpointsTake(db, 'webhook.recovered'))) return recordSuccess(db, webhookId);
  return db.transaction().execute(async (trx) => {
    const run = await webhookSubject(trx, webhookId, { lock: true });
    if (!run?.failing_since || !(await recordSuccess(trx, webhookId))) return false;
    await emitOperational(trx, 'webhook.recovered', async () => {
      const { eventId, last_response } = await lastAttempt(trx, webhookId, new Date());
      return { about: run, eventId, details: { failing_since: iso(run.failing_since), consecutive_failures: run.consecutive_failures, last_response } };
    });
    return true;
  });
}

/** `webhook.disabled`, read from the row its disabling just wrote: the reason, the policy that applied, the run, the last response. */
function reportDisabled(trx: Executor, webhookId: string) {
  return emitOperational(trx, 'webhook.disabled', async () => {
    const hook = await webhookSubject(trx, webhookId);
    if (!hook) return undefined;
    const { eventId, last_response } = await lastAttempt(trx, webhookId, hook.failing_since ?? hook.disabled_at ?? new Date());
    const details = {
      reason: hook.disabled_reason,
      policy: hook.disabled_policy ? policyView(hook.disabled_policy) : null,
      disabled_at: iso(hook.disabled_at),
      failing_since: iso(hook.failing_since),
      consecutive_failures: hook.consecutive_failures,
      last_response,
    };
    return { about: hook, eventId, details };
  });
}

/** webhooks/health.ts `disableGoneWebhook`, reporting `webhook.disabled` when it disabled the webhook. */
export async function disableGoneWebhookReported(db: Db, webhookId: string, at: Date): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const disabled = await disableGoneWebhook(trx, webhookId, at);
    if (disabled) await reportDisabled(trx, webhookId);
    return disabled;
  });
}

/**
 * webhooks/health.ts `disableIfSustained`, reporting `webhook.disabled` when it disabled the
 * webhook, and first `webhook.failing` if the run was never reported (its first failure's
 * follow-up was lost with its worker): the health workflow calls this for every run.
 */
export async function disableIfSustainedReported(db: Db, webhookId: string, since: Date, policy: DisablePolicy, now: Date): Promise<HealthDecision> {
  await reportFailing(db, webhookId, since);
  return db.transaction().execute(async (trx) => {
    const decision = await disableIfSustained(trx, webhookId, since, policy, now);
    if (decision.verdict === 'disabled') await reportDisabled(trx, webhookId);
    return decision;
  });
}

/**
 * What an update of a webhook reports, in its transaction and before it changes the row
 * (locked here until the end): `webhook.re_enabled` when it was disabled or failing (any
 * update re-enables: webhooks.ts `updateWebhook`), `secret.rotated` when it replaced the
 * secret. Handed to the update by the webhooks' operations.
 */
export async function reportWebhookUpdate(trx: Executor, webhookId: string, changes: { secret: boolean }): Promise<void> {
  const hook = await webhookSubject(trx, webhookId, { lock: true });
  if (!hook || hook.deleted_at) return;
  if (hook.disabled_at || hook.failing_since) {
    await emitOperational(trx, 'webhook.re_enabled', async () => ({
      about: hook,
      eventId: null,
      details: { was: hook.disabled_at ? 'disabled' : 'failing', disabled_at: iso(hook.disabled_at), disabled_reason: hook.disabled_reason, failing_since: iso(hook.failing_since), consecutive_failures: hook.consecutive_failures },
    }));
  }
  if (changes.secret) await reportSecretRotated(trx, webhookId, { by: 'update', previousSecretExpiresAt: null });
}

/** `secret.rotated`: never a secret, only how and until when the previous one still signs. */
export async function reportSecretRotated(trx: Executor, webhookId: string, rotation: { by: 'rotation' | 'update'; previousSecretExpiresAt: Date | null }): Promise<void> {
  await emitOperational(trx, 'secret.rotated', async () => {
    const hook = await webhookSubject(trx, webhookId);
    return hook && { about: hook, eventId: null, details: { by: rotation.by, previous_secret_expires_at: rotation.previousSecretExpiresAt ? isoSeconds(rotation.previousSecretExpiresAt) : null } };
  });
}
