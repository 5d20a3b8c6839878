import { sql } from 'kysely';
import type { Config } from '../config';
import type { Db, Executor } from '../db/database';
import type { Mode } from '../account/tables';
import type { WebhookRow, WebhookUpdate } from './tables';
import type { HealthWorkflows } from './health';
import { ApiError, notFound } from '../errors/api-error';
import { isoSeconds } from '../format';
import { hasPrefix, newId } from '../ids';
import { ownedLive, ownerOf, type Principal } from '../account/principal';
import type { z } from '../schema';
import type { UpdateWebhookBody, WebhookCreate } from './webhooks.schema';
import { maskUrl, normalizeWebhookUrl } from './url';
import { log } from '../log';
import { notDeleted } from '../db/soft-delete';
import { errorText } from '../errors/error-text';
import { matches, typesMatching } from '../events/type-patterns';
import { LISTENER_SCHEME } from '../outbound/listener-transport';

/**
 * Webhooks (the API specification, 2.3, 3.2 and 4.2). Scoped by the key's user and mode. The secret is
 * write-only; credentials in the URL are masked whenever the webhook is shown.
 * Any update re-enables a disabled webhook (`disabled_at: null`).
 */

export type WebhookInput = z.output<typeof WebhookCreate>;
export type WebhookChanges = Partial<z.output<typeof UpdateWebhookBody>>;

/** Per account (a parent and its children together) and mode. */
export const MAX_WEBHOOKS_PER_MODE = 100;

/**
 * Rows of `webhooks` that are webhooks, not listeners (`shiphook listen`, src/listeners/:
 * rows the engine delivers to alike, which the webhook operations neither show nor count).
 */
export const notAListener = (table?: string) => sql<boolean>`${sql.ref(table ? `${table}.url` : 'url')} not like ${`${LISTENER_SCHEME}%`}`;

export function webhookView(row: WebhookRow) {
  return {
    id: row.id,
    object: 'Webhook' as const,
    mode: row.mode,
    url: maskUrl(row.url),
    created_at: isoSeconds(row.created_at),
    disabled_at: row.disabled_at ? isoSeconds(row.disabled_at) : null,
    custom_headers: row.custom_headers,
    event_types: row.event_types,
  };
}

/** POST /webhooks `{"webhook": {url, webhook_secret?, custom_headers?, event_types?}}`. */
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
        event_types: input.event_types ?? null,
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
    .where(notDeleted('users'))
    .where('webhooks.mode', '=', who.mode)
    .where(notDeleted('webhooks'))
    .where(notAListener('webhooks'))
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
    .where(ownedLive(who))
    .where(notAListener())
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
        .where(ownedLive(who))
        .executeTakeFirst()
    : undefined;
  if (!row) throw notFound('Webhook not found.');
  return row;
}

export async function getWebhook(db: Db, who: Principal, id: string) {
  return webhookView(await ownWebhook(db, who, id));
}

/**
 * What the platform's operational events hear of an update, in its transaction before the row
 * changes (src/operational-webhooks/): handed in by the operations, as `health` is, since
 * they publish through src/events/, which reads this folder.
 */
export type ReportWebhookUpdate = (trx: Executor, webhookId: string, changes: { secret: boolean }) => Promise<void>;

/**
 * PATCH (of a webhook `ownWebhook` found): `webhook_secret`, `custom_headers` (replaces the list) and
 * `event_types` (replaces the subscription; null: every type), for events published afterwards; re-enables.
 * `health`: told when the update re-enabled a webhook or ended a run of failures.
 */
export async function updateWebhook(db: Db, who: Principal, hook: WebhookRow, input: WebhookChanges, health: HealthWorkflows, report?: ReportWebhookUpdate) {
  const now = new Date();
  // Re-enabled, and its health starts afresh: a failure after this starts a new run.
  const changes: WebhookUpdate = { disabled_at: null, disabled_reason: null, disabled_policy: null, failing_since: null, consecutive_failures: 0, updated_at: now };
  // A secret set by PATCH replaces the old one at once (rotation with a grace period: rotateSecret).
  if (input.webhook_secret !== undefined) Object.assign(changes, { webhook_secret: input.webhook_secret || null, previous_webhook_secret: null, previous_secret_expires_at: null }); // null or "" clears it
  if (input.custom_headers !== undefined) changes.custom_headers = JSON.stringify(input.custom_headers);
  if (input.event_types !== undefined) changes.event_types = input.event_types;
  const row = await db.transaction().execute(async (trx) => {
    await report?.(trx, hook.id, { secret: input.webhook_secret !== undefined });
    return trx
      .updateTable('webhooks')
      .set(changes)
      // Only an update that ended something (disabled, or a run of failures) is a re-enable the view shows.
      .set((eb) => ({ reenabled_at: eb.case().when(eb.or([eb('disabled_at', 'is not', null), eb('failing_since', 'is not', null)])).then(now).else(eb.ref('reenabled_at')).end() }))
      .where('id', '=', hook.id)
      .where(ownedLive(who))
      .returningAll()
      .executeTakeFirst();
  });
  if (!row) throw notFound('Webhook not found.');
  if (hook.disabled_at || hook.failing_since) {
    if (hook.disabled_at) log.info('webhook re-enabled', { webhook_id: hook.id, was_disabled_for: hook.disabled_reason ?? 'unknown' });
    else log.info('webhook failure streak reset by an update', { webhook_id: hook.id, consecutive_failures: hook.consecutive_failures });
    await health.restart(hook.id).catch((err: unknown) => log.warn('could not restart the webhook\'s health workflow', { webhook_id: hook.id, error: errorText(err) }));
  }
  return webhookView(row);
}

export async function deleteWebhook(db: Db, who: Principal, id: string, health: HealthWorkflows): Promise<void> {
  const result = await db
    .updateTable('webhooks')
    .set({ deleted_at: new Date() })
    .where('id', '=', hasPrefix(id, 'hook') ? id : '')
    .where(ownedLive(who))
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw notFound('Webhook not found.');
  // Its health workflow would otherwise wait out its idle time; if the signal is lost, its next decision finds the webhook deleted and ends it.
  const ended = await health.end(id).catch((err: unknown) => {
    log.warn('could not end the webhook\'s health workflow', { webhook_id: id, error: errorText(err) });
    return false;
  });
  if (ended) log.info('webhook deleted: its health workflow ends', { webhook_id: id });
}

// ---- for the delivery engine -------------------------------------------------------

/**
 * Whether the webhook's subscription takes events of this type (`event_types` null: every
 * type). Applied when an event is published, so a change applies to later events only;
 * a test event goes to its webhook whatever it subscribes to.
 */
export const subscribesTo = (hook: Pick<WebhookRow, 'event_types'>, type: string): boolean => matches(hook.event_types, type);

/** The types the webhook's subscription takes, or null for every type. */
export const subscribedTypes = (hook: Pick<WebhookRow, 'event_types'>) => (hook.event_types ? typesMatching(hook.event_types) : null);

/** The webhooks an event of this user and mode may be delivered to (`subscribesTo` its type decides). */
export async function enabledWebhooks(db: Executor, userId: string, mode: Mode): Promise<WebhookRow[]> {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where('user_id', '=', userId)
    .where('mode', '=', mode)
    .where(notDeleted())
    .where('disabled_at', 'is', null)
    .orderBy('id')
    .execute();
}
