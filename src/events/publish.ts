import { sql } from 'kysely';
import type { Db } from '../db/database';
import { ApiError } from '../errors/api-error';
import { newId } from '../ids';
import { enabledWebhooks } from '../webhooks/webhooks';
import { eventDelivery, type NewEvent, urlsOf } from './events';

/** Committed events wait here until a worker's dispatcher starts their delivery (src/engine/outbox.ts). */
export const OUTBOX_CHANNEL = 'shiphook_outbox';

/**
 * The one way an Event comes into being, for every producer (operator API, shipment
 * purchases, test trackers, test events): one transaction writes the Event and one
 * delivery row per enabled webhook of its user and mode, and wakes the workers'
 * dispatchers (NOTIFY, sent on commit), which start its delivery workflow. An event
 * without webhooks is `completed` at once and has nothing to dispatch.
 * `dispatched_at` stays null until a dispatcher started the workflow, so a committed
 * event is never lost, whatever happens to Temporal or to this process.
 * Returns the full Event (with `result`).
 */
export async function publishEvent(db: Db, input: NewEvent) {
  const { event, urls } = await db.transaction().execute(async (trx) => {
    const user = await trx.selectFrom('users').select('id').where('id', '=', input.userId).where('deleted_at', 'is', null).executeTakeFirst();
    if (!user) throw new ApiError('PARAMETER.FORBIDDEN', 'The event could not be published.', [{ field: 'user_id', message: 'no such user' }]);
    const enabled = await enabledWebhooks(trx, input.userId, input.mode);
    const hooks = input.test ? enabled.filter((h) => h.id === input.test!.webhookId) : enabled;
    const id = newId('evt');
    const event = await trx
      .insertInto('events')
      .values({
        id,
        user_id: input.userId,
        mode: input.mode,
        description: input.description,
        status: hooks.length === 0 ? 'completed' : 'in_queue',
        result: JSON.stringify(input.result),
        previous_attributes: JSON.stringify(input.previousAttributes ?? {}),
        test: input.test !== undefined,
        dispatched_at: hooks.length === 0 ? new Date() : null, // nothing to deliver
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (hooks.length) {
      await trx.insertInto('event_deliveries').values(hooks.map((h) => ({ event_id: id, webhook_id: h.id, url: h.url }))).execute();
      await sql`select pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx);
    }
    return { event, urls: urlsOf(hooks.map((h) => ({ url: h.url, state: 'pending' as const }))) };
  });
  return eventDelivery(event, urls);
}
