import type { Transaction } from 'kysely';
import type { Database, Executor } from '../db/database';
import type { Mode } from '../account/tables';
import { newId } from '../ids';
import { publishEvents } from '../events/publish';
import { enabledWebhooks, subscribesTo } from '../webhooks/webhooks';
import { redactUrl } from '../webhooks/url';
import { PLATFORM_MODE } from './platform';
import { PLATFORM_USER_ID } from '../account/platform-user';
import type { OperationalEventType } from './types';

/**
 * The one way an operational event comes into being: an Event of the platform user
 * (platform.ts), published through the one publish path (src/events/publish.ts) in the
 * caller's transaction — the one that made the state change it reports, where there is
 * one, so a change that did not happen (or was rolled back) emits nothing and a retried
 * activity finds the change made and emits nothing again. Nothing is built or written when
 * no operational endpoint takes the type. An event about one of the platform's own
 * webhooks is never emitted: a failing operational endpoint reports nothing about itself.
 */

/** The customer's webhook an operational event is about, as the event names it (never its secret or custom headers). */
export interface WebhookSubject {
  id: string;
  user_id: string;
  mode: Mode;
  url: string;
}

/** What an emitter builds once the type is wanted: the `result`, and a key when the change could be reported twice. */
export interface OperationalEvent {
  about: WebhookSubject;
  /** The customer's event the change came from, if one did. */
  eventId: string | null;
  /** The type's own fields. */
  details: Record<string, unknown>;
  /** Emitted at most once per key (operational_event_keys). */
  once?: string;
}

/**
 * Emits an operational event of `type` when an operational endpoint takes it: `build` reads
 * what the event says, in the transaction (undefined: nothing to report after all). The
 * event's `result` is about the customer's webhook: `id` is its id (the object id the
 * Temporal UI and the event search find it by), then its user, mode and masked URL, the
 * event id, and the type's fields.
 */
export async function emitOperational(db: Executor, type: OperationalEventType, build: (trx: Transaction<Database>) => Promise<OperationalEvent | undefined>): Promise<void> {
  if (!(await operationalEndpointsTake(db, type))) return;
  const emit = async (trx: Transaction<Database>) => {
    const event = await build(trx);
    if (!event || event.about.user_id === PLATFORM_USER_ID) return;
    const id = newId('evt');
    if (event.once) {
      const claimed = await trx.insertInto('operational_event_keys').values({ key: event.once, event_id: id }).onConflict((oc) => oc.column('key').doNothing()).returning('key').executeTakeFirst();
      if (!claimed) return;
    }
    const { about } = event;
    const result = { id: about.id, object: 'Webhook', user_id: about.user_id, mode: about.mode, url: redactUrl(about.url), event_id: event.eventId, ...event.details };
    await publishEvents(trx, [{ id, userId: PLATFORM_USER_ID, mode: PLATFORM_MODE, description: type, result }]);
  };
  await (db.isTransaction ? emit(db as Transaction<Database>) : db.transaction().execute(emit));
}

/** Whether an enabled operational endpoint takes the type: one indexed read, the whole cost of an event nobody wants. */
export async function operationalEndpointsTake(db: Executor, type: OperationalEventType): Promise<boolean> {
  return (await enabledWebhooks(db, PLATFORM_USER_ID, PLATFORM_MODE)).some((hook) => subscribesTo(hook, type));
}

/** The webhook as an operational event names it, read in the transaction (`lock`: held to its end); undefined when it is gone. */
export async function webhookSubject(trx: Executor, id: string, opts: { lock?: boolean } = {}) {
  const query = trx
    .selectFrom('webhooks')
    .select(['id', 'user_id', 'mode', 'url', 'failing_since', 'consecutive_failures', 'disabled_at', 'disabled_reason', 'disabled_policy', 'deleted_at'])
    .where('id', '=', id);
  return (opts.lock ? query.forUpdate() : query).executeTakeFirst();
}
