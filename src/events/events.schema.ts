import { EVENT_TYPES } from './types';
import { documented, freeFormObject, type InputRules, namingParameters, z } from '../schema';
import { KEY_FORMAT, KEY_FORMAT_RULE } from '../idempotency/key-material';
import { Mode } from '../account/api-keys.schema';
import { EVENT_STATUSES } from './tables';
import { OBJECT_REFERENCE, OBJECT_REFERENCE_RULE } from './events';
import { pageQuery } from '../pagination';
import type { RequestPart } from '../operation';

/** Request and response schemas of events (the API specification, 2.4 and 4.3) and their Payloads (replay's: engine/replay.schema.ts). */
const stamp = z.string().openapi({ format: 'date-time', example: '2026-01-31T12:00:00.000Z' });
export const EventStatus = z.enum(EVENT_STATUSES).openapi('EventStatus');
const description = z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(', ')}` }).openapi('EventType');

const summaryFields = {
  id: z.string().openapi({ example: 'evt_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }),
  object: z.literal('Event'),
  mode: Mode,
  description,
  status: EventStatus,
  created_at: stamp,
  updated_at: stamp,
};
const urls = {
  previous_attributes: z.record(z.string(), z.unknown()),
  pending_urls: z.array(z.string()),
  completed_urls: z.array(z.string()),
};

export const EventSummary = z.strictObject(summaryFields).openapi('EventSummary', { description: 'An Event as listed: without `result`, `previous_attributes` and the URLs.' });
export const Event = z.strictObject({ ...summaryFields, ...urls }).openapi('Event', { description: 'An Event retrieved directly: without `result`.' });
export const DeliveredEvent = z
  .strictObject({ ...summaryFields, ...urls, result: z.record(z.string(), z.unknown()) })
  .openapi('DeliveredEvent', { description: 'The full Event, with `result`: what a webhook receives.' });
export const EventList = z.strictObject({ events: z.array(EventSummary), has_more: z.boolean() }).openapi('EventList');

/** A list filter: one of the enumeration's values; empty (`?status=`) counts as not given, as the page parameters do. */
const filter = <C extends z.ZodType>(values: readonly string[], what: string, component: C) =>
  z
    .union([component, z.literal('')], { error: `must be one of ${values.join(', ')}` })
    .optional()
    .openapi({ description: `${what} An empty value counts as not given.` });

/** A filter by what the event is about (events.ts: OBJECT_REFERENCE); empty counts as not given. */
const reference = (what: string, example: string) =>
  z
    .union([z.string().regex(OBJECT_REFERENCE, OBJECT_REFERENCE_RULE).openapi({ pattern: OBJECT_REFERENCE.source, example }), z.literal('')], { error: OBJECT_REFERENCE_RULE })
    .optional()
    .openapi({ description: `${what} An empty value counts as not given.` });

/**
 * GET /events: the page parameters (pagination.ts reads them) and four filters, combinable.
 * Unknown parameters are ignored (clients send extras). Read into PageParams and the filter.
 */
const eventPage = pageQuery('evt');
export const EVENT_LIST_QUERY = {
  schema: eventPage.schema.in
    .safeExtend({
      status: filter(EVENT_STATUSES, 'Only events with this status.', EventStatus),
      description: filter(EVENT_TYPES, 'Only events of this type.', description),
      object_id: reference('Only events about this object: its `result.id` (`trk_…`, `shp_…`, `batch_…`), exactly.', 'trk_0192f3a4b5c67d8e9f0a1b2c3d4e5f60'),
      tracking_code: reference('Only events about the tracker or shipment with this `result.tracking_code`, in any case.', 'EZ4000000004'),
    })
    .transform(({ status, description: type, object_id, tracking_code, ...page }) => ({
      page: eventPage.schema.out.parse(page),
      filter: { status: status || undefined, description: type || undefined, objectId: object_id || undefined, trackingCode: tracking_code || undefined },
    })),
  // A bad filter is not a pagination parameter: the message names whichever parameter it is.
  rules: { ...eventPage.rules, message: namingParameters('Invalid query parameter') },
} satisfies RequestPart;

export const Payload = z
  .strictObject({
    id: z.string().openapi({ example: 'payload_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }),
    object: z.literal('Payload'),
    created_at: stamp,
    updated_at: stamp,
    attempt: z
      .number()
      .int()
      .nullable()
      .openapi({
        description: 'The attempt\'s number, as its request\'s `X-Shiphook-Attempt` said: 1 for the first attempt to this webhook, counting from 1 again after a replay or recovery. Null on Payloads recorded before shiphook kept it.',
        example: 1,
      }),
    request_url: z.string(),
    request_headers: z.record(z.string(), z.string()),
    request_body: z.string(),
    response_code: z.number().int(),
    response_headers: z.record(z.string(), z.string()),
    response_body: z.string(),
    total_time: z.number().int().openapi({ description: 'Milliseconds.' }),
  })
  .openapi('Payload', { description: 'One delivery attempt of an Event.' });
export const PayloadList = z.strictObject({ payloads: z.array(Payload) }).openapi('PayloadList');

export const NewEventBody = z
  .object(
    {
      user_id: z.string({ error: 'must be a user id' }).regex(/^user_[0-9a-f]{32}$/, 'must be a user id'),
      mode: Mode,
      description,
      result: freeFormObject('The object the event is about.')
        .refine((r) => typeof r.object === 'string', 'must be an object with a string `object`')
        .openapi(documented({ required: ['object'], properties: { object: { type: 'string', description: 'Its type: `Tracker`, `Batch`, …' } } })),
      previous_attributes: freeFormObject('Previous values of the changed attributes.').nullish(),
    },
    { error: 'must be a JSON object' },
  )
  .openapi('NewEvent', { example: { user_id: 'user_0192f3a4b5c67d8e9f0a1b2c3d4e5f60', mode: 'test', description: 'batch.created', result: { object: 'Batch', id: 'batch_1' } } });
export const NEW_EVENT_INPUT: InputRules = { code: 'PARAMETER.FORBIDDEN', message: 'The event could not be published.' };

/** POST /v2/events/trigger (`shiphook trigger`): the type of the test event to publish. */
export const TriggerEventBody = z
  .object({ description }, { error: 'must be a JSON object' })
  .openapi('TriggerEventRequest', { example: { description: 'tracker.updated' } });
export const TRIGGER_EVENT_INPUT: InputRules = { code: 'WEBHOOK.EVENT.INVALID', message: 'Unknown event type.' };

// ---- batch publish (POST /admin/v1/events/batch) -----------------------------------

/** Events per batch: one transaction and one statement per table, within the 1 MB request body. */
export const MAX_BATCH_EVENTS = 500;

export const NewEventBatchBody = z
  .object(
    {
      events: z
        .array(
          NewEventBody.extend({
            idempotency_key: z
              .string({ error: 'must be a string' })
              .regex(KEY_FORMAT, KEY_FORMAT_RULE)
              .optional()
              .openapi({ description: 'This event\'s own key: a batch that holds it again within 24 hours answers the first event\'s id and publishes nothing for it.' }),
          }),
          { error: 'must be an array of events' },
        )
        .min(1, 'must hold at least one event')
        .max(MAX_BATCH_EVENTS, `must hold at most ${MAX_BATCH_EVENTS} events`),
    },
    { error: 'must be a JSON object' },
  )
  .openapi('NewEventBatch');
export const PublishedBatch = z
  .strictObject({ events: z.array(z.strictObject({ id: z.string().openapi({ example: 'evt_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }) })) })
  .openapi('PublishedBatch', { description: 'The ids of the batch\'s events, in the order they were sent.' });
