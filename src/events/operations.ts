import type { Db } from '../db/database';
import type { Caller } from '../account/principal';
import type { TemporalDeps } from '../engine/client';
import { dispatchIncidents, replayEvent, replayProgress, startReplay } from '../engine/replay';
import { BULK_REPLAY_INPUT, BulkReplayBody, DispatchIncidentList, Replay, REPLAY_INPUT, ReplayBody } from '../engine/replay.schema';
import { ApiError } from '../errors/api-error';
import { defineOperation } from '../operation';
import { getEvent, listEvents, ownEvent } from './events';
import { DeliveredEvent, Event, EVENT_LIST_QUERY, EventList, MAX_BATCH_EVENTS, NEW_EVENT_INPUT, NewEventBatchBody, NewEventBody, Payload, PayloadList, PublishedBatch, TRIGGER_EVENT_INPUT, TriggerEventBody } from './events.schema';
import { publishBatch } from './batch';
import { getPayload, listPayloads } from './payloads';
import { newEventOf, publishEvent } from './publish';
import { triggerEvent } from './trigger';

/** Events (the API specification, 4.3), their delivery attempts (Payloads) and replay. */
type Context = Caller & TemporalDeps;
const tag = 'Events';

export const eventOperations = [
  defineOperation({ method: 'GET', path: '/events', access: 'any key', query: EVENT_LIST_QUERY,
    status: 200, response: EventList, tag, summary: 'List events',
    description: 'Newest first; items without `result`, `previous_attributes` and the URLs. Narrowed by `status`, `description` (an event type), `object_id` (the `result.id` the event is about) and `tracking_code` (a tracker\'s or shipment\'s, in any case), combinable with each other and the page parameters.',
    links: { 'GET /events/:id': '/events/0/id', 'GET /events/:id/payloads': '/events/0/id', 'POST /events/:id/replay': '/events/0/id' },
    handler: ({ query }, { db, who }: Context) => listEvents(db, who, query.page, query.filter) }),
  // Before /events/:id, whose route would otherwise answer this path's POST with 405.
  defineOperation({ method: 'POST', path: '/events/trigger', access: 'test key',
    body: { schema: TriggerEventBody, rules: TRIGGER_EVENT_INPUT },
    status: 201, response: DeliveredEvent, tag, summary: 'Trigger a test event',
    description: 'A test-mode event of the type, for the key\'s user, with the event catalogue\'s example as its `result`, delivered like any event to every webhook and listener of the user in test mode that subscribes to the type (`shiphook trigger`).',
    links: { 'GET /events/:id': '/id', 'GET /events/:id/payloads': '/id' },
    handler: ({ body }, { db, who }: Context) => triggerEvent(db, who, body.description) }),
  defineOperation({ method: 'GET', path: '/events/:id', access: 'any key', params: { id: 'evt' },
    status: 200, response: Event, tag, summary: 'Retrieve an event', description: 'Without `result`.',
    handler: ({ params }, { db, who }: Context) => getEvent(db, who, params.id) }),
  defineOperation({ method: 'GET', path: '/events/:id/payloads', access: 'any key', params: { id: 'evt' },
    status: 200, response: PayloadList, tag, summary: 'List the delivery attempts (Payloads) of an event',
    handler: ({ params }, { db, who }: Context) => listPayloads(db, who, params.id) }),
  defineOperation({ method: 'GET', path: '/events/:id/payloads/:payload_id', access: 'any key', params: { id: 'evt', payload_id: 'payload' },
    status: 200, response: Payload, tag, summary: 'Retrieve one delivery attempt',
    handler: ({ params }, { db, who }: Context) => getPayload(db, who, params.id, params.payload_id) }),
  defineOperation({ method: 'POST', path: '/events/:id/replay', access: 'any key', params: { id: 'evt' }, rateLimit: 'replays', idempotent: true,
    before: ({ params }, { db, who }: Context) => ownEvent(db, who, params.id),
    body: { schema: ReplayBody, rules: REPLAY_INPUT, optional: true },
    status: 200, response: Event, tag, summary: 'Replay an event',
    description: 'Also an event delivered already (`shiphook events resend`): with `all` to every webhook that takes it now, with `webhook_id` to that one.',
    handler: ({ body, target }, ctx: Context) => replayEvent(ctx.db, ctx, target.id, { all: body.all === true, webhookId: body.webhook_id ?? undefined }) }),
];

/** The operator's side of events, under /admin/v1. */
const operator = 'Operator';

export const operatorEventOperations = [
  defineOperation({ method: 'POST', path: '/events', access: 'operator', idempotent: true,
    body: { schema: NewEventBody, rules: NEW_EVENT_INPUT },
    status: 201, response: DeliveredEvent, tag: operator, summary: 'Publish an event',
    handler: ({ body }, { db }: { db: Db }) => publishEvent(db, newEventOf(body)) }),
  defineOperation({ method: 'POST', path: '/events/batch', access: 'operator', idempotent: true,
    body: { schema: NewEventBatchBody, rules: NEW_EVENT_INPUT },
    status: 201, response: PublishedBatch, tag: operator, summary: 'Publish a batch of events',
    description: `Up to ${MAX_BATCH_EVENTS} events in one transaction: all are published or none (a refusal names each bad event by its index, \`events[3].description\`); the workers are woken once. Each event may carry its own \`idempotency_key\`.`,
    handler: ({ body }, { db }: { db: Db }) => publishBatch(db, body.events) }),
  defineOperation({ method: 'POST', path: '/events/replay', access: 'operator', idempotent: true,
    body: { schema: BulkReplayBody, rules: BULK_REPLAY_INPUT },
    status: 202, response: Replay, tag: operator, summary: 'Replay every event matching a filter',
    description: 'Answers at once with a handle; the workers\' dispatchers start the matched events again.',
    // Answered at once: the dispatchers carry the replay out (engine/replay.ts).
    handler: ({ body }, { db }: { db: Db }) => startReplay(db, body) }),
  defineOperation({ method: 'GET', path: '/replays/:id', access: 'operator', params: { id: 'replay' },
    status: 200, response: Replay, tag: operator, summary: 'How far a broad replay got',
    handler: async ({ params }, { db }: { db: Db }) => {
      const progress = await replayProgress(db, params.id);
      if (!progress) throw new ApiError('NOT_FOUND', 'Replay not found.');
      return progress;
    } }),
  defineOperation({ method: 'GET', path: '/events/dispatch_incidents', access: 'operator',
    status: 200, response: DispatchIncidentList, tag: operator, summary: 'List dispatch incidents',
    description: 'Events whose delivery workflow Temporal refused to start (oldest 100); replay them with `dispatch_failed: true` once the cause is fixed.',
    handler: async (_, { db }: { db: Db }) => ({ events: await dispatchIncidents(db) }) }),
];
