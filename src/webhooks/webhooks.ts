import { sql } from 'kysely';
import type { Config } from '../config';
import { anyOf, type Db, type Executor } from '../db/database';
import type { Mode } from '../account/tables';
import type { WebhookRow, WebhookUpdate } from './tables';
import { ApiError, notFound } from '../errors/api-error';
import { isoSeconds } from '../format';
import { hasPrefix, newId } from '../ids';
import { ownedBy, ownerOf, type Principal } from '../account/principal';
import type { z } from '../schema';
import type { UpdateWebhookBody, WebhookCreate } from './webhooks.schema';
import { maskUrl, normalizeWebhookUrl } from './url';

/**
 * Webhooks (the API specification, 2.3, 3.2 and 4.2). Scoped by the key's user and mode. The secret is
 * write-only; credentials in the URL are masked whenever the webhook is shown.
 * Any update re-enables a disabled webhook (`disabled_at: null`).
 */

export type WebhookInput = z.output<typeof WebhookCreate>;
export type WebhookChanges = z.output<typeof UpdateWebhookBody>;

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

/** PATCH (of a webhook `ownWebhook` found): top-level `webhook_secret` and `custom_headers` (replaces the list); re-enables. */
export async function updateWebhook(db: Db, who: Principal, hook: WebhookRow, input: WebhookChanges) {
  // Re-enabled, and its health starts afresh: a failure after this starts a new run.
  const changes: WebhookUpdate = { disabled_at: null, failing_since: null, consecutive_failures: 0, updated_at: new Date() };
  // A secret set by PATCH replaces the old one at once (rotation with a grace period: rotateSecret).
  if (input.webhook_secret !== undefined) Object.assign(changes, { webhook_secret: input.webhook_secret || null, previous_webhook_secret: null, previous_secret_expires_at: null }); // null or "" clears it
  if (input.custom_headers !== undefined) changes.custom_headers = JSON.stringify(input.custom_headers);
  const row = await db
    .updateTable('webhooks')
    .set(changes)
    .where('id', '=', hook.id)
    .where(ownedBy(who))
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw notFound('Webhook not found.');
  return webhookView(row);
}

export async function deleteWebhook(db: Db, who: Principal, id: string): Promise<void> {
  const result = await db
    .updateTable('webhooks')
    .set({ deleted_at: new Date() })
    .where('id', '=', hasPrefix(id, 'hook') ? id : '')
    .where(ownedBy(who))
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw notFound('Webhook not found.');
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

/** Sets disabled_at if the webhook is still enabled; true when it changed something. */
export async function disableWebhook(db: Executor, id: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({ disabled_at: at })
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

export type HealthVerdict = 'disabled' | 'not yet' | 'run ended';

/**
 * Disables the webhook if the run of failures that started at `since` is still
 * going, has at least `minFailures` attempts and has lasted at least `minSpanMs`.
 * 'run ended': it succeeded since, was updated, disabled or deleted.
 */
export async function disableIfSustained(db: Db, id: string, since: Date, minFailures: number, minSpanMs: number, now: Date): Promise<HealthVerdict> {
  const disabled = await db
    .updateTable('webhooks')
    .set({ disabled_at: now })
    .where('id', '=', id)
    .where('failing_since', '=', since)
    .where('failing_since', '<=', new Date(now.getTime() - minSpanMs))
    .where('consecutive_failures', '>=', minFailures)
    .where('disabled_at', 'is', null)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (disabled.numUpdatedRows > 0n) return 'disabled';
  const row = await db.selectFrom('webhooks').select(['failing_since', 'disabled_at', 'deleted_at']).where('id', '=', id).executeTakeFirst();
  const sameRunGoesOn = row && !row.disabled_at && !row.deleted_at && row.failing_since?.getTime() === since.getTime();
  return sameRunGoesOn ? 'not yet' : 'run ended';
}
