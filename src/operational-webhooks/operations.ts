import type { Config } from '../config';
import type { Db } from '../db/database';
import type { TemporalDeps } from '../engine/client';
import { replayEvent } from '../engine/replay';
import { healthWorkflows } from '../engine/starters';
import { Empty } from '../account/api-keys.schema';
import { PayloadList } from '../events/events.schema';
import { defineOperation } from '../operation';
import { createOperationalWebhook, deleteOperationalWebhook, listOperationalWebhooks, operationalWebhookView, ownOperationalWebhook, updateOperationalWebhook } from './endpoints';
import { getOperationalEvent, listOperationalEvents, listOperationalPayloads, ownOperationalEvent } from './event-log';
import {
  CreatedOperationalWebhook, NewOperationalWebhook, OPERATIONAL_EVENT_QUERY, OPERATIONAL_WEBHOOK_INPUT, OperationalEvent, OperationalEventList, OperationalWebhook,
  OperationalWebhookList, OperationalWebhookUpdate, ReplayedOperationalEvent,
} from './operational-webhooks.schema';

/**
 * The operator's operational webhooks, under /admin/v1: endpoints for the platform's own
 * events (docs/operations.md, Operational webhooks) and the record of what was sent to them.
 */
type Context = { db: Db; config: Config } & TemporalDeps;
const tag = 'Operational webhooks';

export const operationalWebhookOperations = [
  defineOperation({ method: 'POST', path: '/operational_webhooks', access: 'operator', idempotent: true,
    body: { schema: NewOperationalWebhook, rules: OPERATIONAL_WEBHOOK_INPUT },
    status: 201, response: CreatedOperationalWebhook, tag, summary: 'Register an operational webhook',
    description: 'An endpoint for the platform\'s own events (`webhook.disabled`, `delivery.exhausted`, …), delivered, signed and retried as customers\' events are. Answers the signing secret this once.',
    links: { 'PATCH /operational_webhooks/:id': '/id', 'DELETE /operational_webhooks/:id': '/id' },
    handler: ({ body }, { db, config }: Context) => createOperationalWebhook(db, config, body) }),
  defineOperation({ method: 'GET', path: '/operational_webhooks', access: 'operator',
    status: 200, response: OperationalWebhookList, tag, summary: 'List operational webhooks', description: 'Newest first.',
    handler: (_, { db }: Context) => listOperationalWebhooks(db) }),
  defineOperation({ method: 'GET', path: '/operational_webhooks/:id', access: 'operator', params: { id: 'hook' },
    status: 200, response: OperationalWebhook, tag, summary: 'Retrieve an operational webhook',
    handler: async ({ params }, { db }: Context) => operationalWebhookView(await ownOperationalWebhook(db, params.id)) }),
  defineOperation({ method: 'PATCH', path: '/operational_webhooks/:id', access: 'operator', params: { id: 'hook' },
    before: ({ params }, { db }: Context) => ownOperationalWebhook(db, params.id),
    body: { schema: OperationalWebhookUpdate, rules: OPERATIONAL_WEBHOOK_INPUT, optional: true },
    status: 200, response: OperationalWebhook, tag, summary: 'Update (and re-enable) an operational webhook',
    handler: ({ body, target }, ctx: Context) => updateOperationalWebhook(ctx.db, target, body, healthWorkflows(ctx)) }),
  defineOperation({ method: 'DELETE', path: '/operational_webhooks/:id', access: 'operator', params: { id: 'hook' },
    status: 200, response: Empty, tag, summary: 'Delete an operational webhook',
    handler: async ({ params }, ctx: Context) => {
      await deleteOperationalWebhook(ctx.db, params.id, healthWorkflows(ctx));
      return {};
    } }),
  defineOperation({ method: 'GET', path: '/operational_events', access: 'operator', query: OPERATIONAL_EVENT_QUERY,
    status: 200, response: OperationalEventList, tag, summary: 'List operational events',
    description: 'Newest first, narrowed by `status`, `description` (an operational event type) and `webhook_id` (the customer webhook they are about).',
    links: { 'GET /operational_events/:id': '/events/0/id', 'GET /operational_events/:id/payloads': '/events/0/id', 'POST /operational_events/:id/replay': '/events/0/id' },
    handler: ({ query }, { db }: Context) => listOperationalEvents(db, query.page, query.filter) }),
  defineOperation({ method: 'GET', path: '/operational_events/:id', access: 'operator', params: { id: 'evt' },
    status: 200, response: OperationalEvent, tag, summary: 'Retrieve an operational event', description: 'With its `result`, as its endpoints received it.',
    handler: ({ params }, { db }: Context) => getOperationalEvent(db, params.id) }),
  defineOperation({ method: 'GET', path: '/operational_events/:id/payloads', access: 'operator', params: { id: 'evt' },
    status: 200, response: PayloadList, tag, summary: 'List the delivery attempts of an operational event',
    handler: ({ params }, { db }: Context) => listOperationalPayloads(db, params.id) }),
  defineOperation({ method: 'POST', path: '/operational_events/:id/replay', access: 'operator', params: { id: 'evt' }, idempotent: true,
    before: ({ params }, { db }: Context) => ownOperationalEvent(db, params.id),
    status: 200, response: ReplayedOperationalEvent, tag, summary: 'Replay an operational event',
    description: 'To the endpoints it has not reached yet. Many at once: `POST /admin/v1/events/replay` with the platform user\'s id (docs/operations.md).',
    handler: ({ target }, ctx: Context) => replayEvent(ctx.db, ctx, target.id) }),
];
