import { sql } from 'kysely';
import type { Config } from '../config';
import { anyOf, type Db, type Executor } from '../db/database';
import type { Mode } from '../account/tables';
import type { DisablePolicy, WebhookRow, WebhookUpdate } from './tables';
import { ApiError, notFound } from '../errors/api-error';
import { isoSeconds } from '../format';
import { hasPrefix, newId } from '../ids';
import { ownedBy, ownerOf, type Principal } from '../account/principal';
import type { z } from '../schema';
import type { UpdateWebhookBody, WebhookCreate } from './webhooks.schema';
import { maskUrl, normalizeWebhookUrl } from './url';
import { log } from '../log';

/**
 * Webhooks (the API specification, 2.3, 3.2 and 4.2). Scoped by the key's user and mode. The secret is
 * write-only; credentials in the URL are masked whenever the webhook is shown.
 * Any update re-enables a disabled webhook (`disabled_at: null`).
 */

export type WebhookInput = z.output<typeof WebhookCreate>;
export type WebhookChanges = Partial<z.output<typeof UpdateWebhookBody>>;

/** Per account (a parent and its children together) and mode. */
export const MAX_WEBHOOKS_PER_MODE = 100;

export function webhookView(row: WebhookRow) {
  return {
    id: row.id,
    object: 'Webhook' as const,
    mode: row.mode,
    url: maskUrl(row.url),
    created_at: isoSeconds(row.created_at),
    disabled_at: row.disabled_at ? isoSeconds(row.disabled_at) : null,
    custom_headers: row.custom_headers,
  };
}

/** POST /webhooks `{"webhook": {url, webhook_secret?, custom_headers?}}`. */
export async function createWebhook(db: Db, config: Config, who: Principal, input: WebhookInput) {
  const url = await normalizeWebhookUrl(input.url, who.mode, config);
  const secret = input.webhook_secret || null;
  const headers = input.custom_headers ?? [];

  return db.transaction().execute(async (trx) => {
    await assertBelowWebhookCap(trx, who);
    const row = await trx
      .insertInto('webhooks')
      .values({
        id: newId('hook'),
        ...ownerOf(who),
        url: url!,
        webhook_secret: secret,
        custom_headers: JSON.stringify(headers),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return webhookView(row);
  });
}

/**
 * The cap counts the webhooks of the whole account — the parent and every live
 * child — in the caller's mode. The account's advisory lock (held to the end of the
 * transaction) queues concurrent creates, so two cannot both see room for one.
 */
async function assertBelowWebhookCap(trx: Executor, who: Principal): Promise<void> {
  const accountId = who.user.parent_id ?? who.user.id;
  await sql`select pg_advisory_xact_lock(hashtextextended(${`webhooks:${accountId}`}, 0))`.execute(trx);
  const { count } = await trx
    .selectFrom('webhooks')
    .innerJoin('users', 'users.id', 'webhooks.user_id')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where((eb) => eb.or([eb('users.id', '=', accountId), eb('users.parent_id', '=', accountId)]))
    .where('users.deleted_at', 'is', null)
    .where('webhooks.mode', '=', who.mode)
    .where('webhooks.deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  if (Number(count) >= MAX_WEBHOOKS_PER_MODE) {
    throw new ApiError('WEBHOOK.INVALID', `An account (a parent and its children) can have at most ${MAX_WEBHOOKS_PER_MODE} webhooks per mode.`, [
      { field: 'url', message: `at most ${MAX_WEBHOOKS_PER_MODE} webhooks per account and mode` },
    ]);
  }
}

/** The caller's live webhooks of the key's mode, newest first. */
export async function ownWebhooks(db: Executor, who: Principal): Promise<WebhookRow[]> {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where(ownedBy(who))
    .where('deleted_at', 'is', null)
    .orderBy('id', 'desc')
    .execute();
}

export async function listWebhooks(db: Db, who: Principal) {
  return { webhooks: (await ownWebhooks(db, who)).map(webhookView) };
}

/** The caller's live webhook of the key's mode; 404 otherwise. */
export async function ownWebhook(db: Executor, who: Principal, id: string): Promise<WebhookRow> {
  const row = hasPrefix(id, 'hook')
    ? await db
        .selectFrom('webhooks')
        .selectAll()
        .where('id', '=', id)
        .where(ownedBy(who))
        .where('deleted_at', 'is', null)
        .executeTakeFirst()
    : undefined;
  if (!row) throw notFound('Webhook not found.');
  return row;
}

export async function getWebhook(db: Db, who: Principal, id: string) {
  return webhookView(await ownWebhook(db, who, id));
}

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

/**
 * PATCH (of a webhook `ownWebhook` found): `webhook_secret` and `custom_headers` (replaces the list); re-enables.
 * `health`: told when the update re-enabled a webhook or ended a run of failures.
 */
export async function updateWebhook(db: Db, who: Principal, hook: WebhookRow, input: WebhookChanges, health?: HealthWorkflows) {
  const now = new Date();
  // Re-enabled, and its health starts afresh: a failure after this starts a new run.
  const changes: WebhookUpdate = { disabled_at: null, disabled_reason: null, disabled_policy: null, failing_since: null, consecutive_failures: 0, updated_at: now };
  // A secret set by PATCH replaces the old one at once (rotation with a grace period: rotateSecret).
  if (input.webhook_secret !== undefined) Object.assign(changes, { webhook_secret: input.webhook_secret || null, previous_webhook_secret: null, previous_secret_expires_at: null }); // null or "" clears it
  if (input.custom_headers !== undefined) changes.custom_headers = JSON.stringify(input.custom_headers);
  const row = await db
    .updateTable('webhooks')
    .set(changes)
    // Only an update that ended something (disabled, or a run of failures) is a re-enable the view shows.
    .set((eb) => ({ reenabled_at: eb.case().when(eb.or([eb('disabled_at', 'is not', null), eb('failing_since', 'is not', null)])).then(now).else(eb.ref('reenabled_at')).end() }))
    .where('id', '=', hook.id)
    .where(ownedBy(who))
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw notFound('Webhook not found.');
  if (hook.disabled_at || hook.failing_since) {
    if (hook.disabled_at) log.info('webhook re-enabled', { webhook_id: hook.id, was_disabled_for: hook.disabled_reason ?? 'unknown' });
    else log.info('webhook failure streak reset by an update', { webhook_id: hook.id, consecutive_failures: hook.consecutive_failures });
    await health?.restart(hook.id).catch((err: unknown) => log.warn('could not restart the webhook\'s health workflow', { webhook_id: hook.id, err }));
  }
  return webhookView(row);
}

export async function deleteWebhook(db: Db, who: Principal, id: string, health?: HealthWorkflows): Promise<void> {
  const result = await db
    .updateTable('webhooks')
    .set({ deleted_at: new Date() })
    .where('id', '=', hasPrefix(id, 'hook') ? id : '')
    .where(ownedBy(who))
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw notFound('Webhook not found.');
  // Its health workflow would otherwise wait out its idle time; if the signal is lost, its next decision finds the webhook deleted and ends it.
  const ended = await health?.end(id).catch((err: unknown) => {
    log.warn('could not end the webhook\'s health workflow', { webhook_id: id, err });
    return false;
  });
  if (ended) log.info('webhook deleted: its health workflow ends', { webhook_id: id });
}

// ---- for the delivery engine -------------------------------------------------------

/** The webhooks an event of this user and mode is delivered to. */
export async function enabledWebhooks(db: Executor, userId: string, mode: Mode): Promise<WebhookRow[]> {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where('user_id', '=', userId)
    .where('mode', '=', mode)
    .where('deleted_at', 'is', null)
    .where('disabled_at', 'is', null)
    .orderBy('id')
    .execute();
}

/** Disables the webhook because its endpoint answered 410 Gone, if it is still enabled; true when it changed something. */
export async function disableGoneWebhook(db: Executor, id: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({ disabled_at: at, disabled_reason: 'endpoint_gone', disabled_policy: null })
    .where('id', '=', id)
    .where('disabled_at', 'is', null)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

// ---- health: runs of failed attempts (the API specification, 3.2) --------------------

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
    .where('deleted_at', 'is', null)
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
    .where('deleted_at', 'is', null)
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
