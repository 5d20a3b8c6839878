import { sql, type Transaction } from 'kysely';
import type { Database, Db, Executor } from '../db/database';
import { anyOf } from '../db/database';
import { ApiError } from '../errors/api-error';
import { newId } from '../ids';
import type { z } from '../schema';
import type { WebhookRow } from '../webhooks/tables';
import { enabledWebhooks, subscribesTo } from '../webhooks/webhooks';
import { eventDelivery, type NewEvent, urlsOf } from './events';
import type { NewEventBody } from './events.schema';
import { notDeleted } from '../db/soft-delete';
import { inSpan } from '../telemetry/spans';
import { traceparentNow } from '../telemetry/stored-context';

/** Committed events wait here until a worker's dispatcher starts their delivery (src/engine/outbox.ts). */
export const OUTBOX_CHANNEL = 'shiphook_outbox';

/** Delivery rows per statement: under PostgreSQL's 65,535 parameters with three columns each. */
const DELIVERIES_PER_INSERT = 10_000;

/** The operator API's event body (POST /admin/v1/events, one item of a batch) as a producer's input. */
export function newEventOf(body: z.output<typeof NewEventBody>): NewEvent {
  return { userId: body.user_id, mode: body.mode, description: body.description, result: body.result, previousAttributes: body.previous_attributes ?? {} };
}

/** One event: {@link publishEvents} of one. */
export async function publishEvent(db: Db, input: NewEvent) {
  const [event] = await publishEvents(db, [input]);
  return event!;
}

/**
 * The one way Events come into being, for every producer (operator API, its batches,
 * shipment purchases, test trackers, test events): one transaction (the caller's, or
 * its own) writes the Events and one delivery row per enabled webhook of each event's
 * user and mode that subscribes to its type (a test event: its one webhook, whatever it
 * subscribes to), and wakes the workers' dispatchers once (one NOTIFY, sent on commit),
 * which start their delivery. An event no webhook wants is `completed` at once and has
 * nothing to dispatch: no workflow. `dispatched_at` stays null until a dispatcher started the
 * workflow, so a committed event is never lost, whatever happens to Temporal or to this
 * process. An input whose user does not exist refuses them all, each such input named by
 * `fieldOf` (its index in a batch). Returns the full Events (with `result`), in order.
 */
export async function publishEvents(db: Executor, inputs: readonly NewEvent[], opts: { fieldOf?: (index: number, field: string) => string } = {}) {
  if (inputs.length === 0) return [];
  const publish = async (trx: Transaction<Database>) => {
    // Kept with each event: the worker that dispatches it continues this trace (none without tracing).
    const traceparent = traceparentNow();
    const userIds = [...new Set(inputs.map((i) => i.userId))];
    const users = await trx.selectFrom('users').select('id').where('id', '=', anyOf(userIds)).where(notDeleted()).execute();
    const known = new Set(users.map((u) => u.id));
    const unknown = inputs.flatMap((input, index) => (known.has(input.userId) ? [] : [{ field: opts.fieldOf?.(index, 'user_id') ?? 'user_id', message: 'no such user' }]));
    if (unknown.length) throw new ApiError('PARAMETER.FORBIDDEN', 'The event could not be published.', unknown);

    const enabled = new Map<string, WebhookRow[]>();
    for (const { userId, mode } of inputs) {
      const owner = `${userId}/${mode}`;
      if (!enabled.has(owner)) enabled.set(owner, await enabledWebhooks(trx, userId, mode));
    }
    const planned = inputs.map((input) => {
      const all = enabled.get(`${input.userId}/${input.mode}`)!;
      const hooks = input.test ? all.filter((h) => h.id === input.test!.webhookId) : all.filter((h) => subscribesTo(h, input.description));
      return { id: input.id ?? newId('evt'), input, hooks };
    });
    const rows = await trx
      .insertInto('events')
      .values(
        planned.map(({ id, input, hooks }) => ({
          id,
          user_id: input.userId,
          mode: input.mode,
          description: input.description,
          status: hooks.length === 0 ? 'completed' : 'in_queue',
          result: JSON.stringify(input.result),
          previous_attributes: JSON.stringify(input.previousAttributes ?? {}),
          test: input.test !== undefined,
          dispatched_at: hooks.length === 0 ? new Date() : null, // nothing to deliver
          traceparent,
        })),
      )
      .returningAll()
      .execute();
    const deliveries = planned.flatMap(({ id, hooks }) => hooks.map((h) => ({ event_id: id, webhook_id: h.id, url: h.url })));
    for (let at = 0; at < deliveries.length; at += DELIVERIES_PER_INSERT) {
      await trx.insertInto('event_deliveries').values(deliveries.slice(at, at + DELIVERIES_PER_INSERT)).execute();
    }
    if (deliveries.length) await sql`select pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return planned.map(({ id, hooks }) => eventDelivery(byId.get(id)!, urlsOf(hooks.map((h) => ({ url: h.url, state: 'pending' as const })))));
  };
  const attributes = () => ({ attributes: { 'shiphook.event.count': inputs.length, ...(inputs.length === 1 ? { 'shiphook.event.type': inputs[0]!.description } : {}) } });
  return inSpan('publish events', attributes, async (span) => {
    const events = await (db.isTransaction ? publish(db as Transaction<Database>) : db.transaction().execute(publish));
    if (events.length === 1) span?.setAttribute('shiphook.event.id', events[0]!.id);
    return events;
  });
}
