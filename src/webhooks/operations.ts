import type { TemporalDeps } from '../engine/client';
import { healthWorkflows } from '../engine/starters';
import type { Caller } from '../account/principal';
import { Empty } from '../account/api-keys.schema';
import { DeliveredEvent } from '../events/events.schema';
import { recoverWebhook, recoveryProgress } from '../engine/recovery';
import { notFound } from '../errors/api-error';
import { defineOperation } from '../operation';
import { RECOVER_INPUT, RecoverBody, Recovery } from '../engine/recovery.schema';
import { webhookHealth } from './health-view';
import { reportWebhookUpdate } from '../operational-webhooks/webhook-changes';
import { rotateSecret } from './secret-rotation';
import { sendTestEvent } from './test-events';
import { createWebhook, deleteWebhook, getWebhook, listWebhooks, ownWebhook, updateWebhook } from './webhooks';
import {
  CreateWebhookBody, ROTATE_SECRET_INPUT, RotateSecretBody, TEST_EVENT_INPUT, TestEventBody, UpdateWebhookBody, Webhook, WEBHOOK_INPUT,
  WebhookHealth, WebhookList, WebhookSecret,
} from './webhooks.schema';

/** Webhooks (the API specification, 4.2; statuses per COMPATIBILITY.md, 201 for PATCH included), and shiphook's additions. */
type Context = Caller & TemporalDeps;
const tag = 'Webhooks';

export const webhookOperations = [
  defineOperation({ method: 'POST', path: '/webhooks', access: 'any key', idempotent: true,
    body: { schema: CreateWebhookBody, rules: { ...WEBHOOK_INPUT, wrapper: 'webhook' } },
    status: 201, response: Webhook, tag, summary: 'Create a webhook',
    links: { 'GET /webhooks/:id': '/id', 'PATCH /webhooks/:id': '/id', 'DELETE /webhooks/:id': '/id' },
    handler: ({ body }, { db, config, who }: Context) => createWebhook(db, config, who, body.webhook) }),
  defineOperation({ method: 'GET', path: '/webhooks', access: 'any key',
    status: 200, response: WebhookList, tag, summary: 'List webhooks', description: 'Unpaginated: all webhooks of the key\'s user and mode.',
    handler: (_, { db, who }: Context) => listWebhooks(db, who) }),
  defineOperation({ method: 'GET', path: '/webhooks/:id', access: 'any key', params: { id: 'hook' },
    status: 200, response: Webhook, tag, summary: 'Retrieve a webhook',
    handler: ({ params }, { db, who }: Context) => getWebhook(db, who, params.id) }),
  defineOperation({ method: 'PATCH', alsoAt: 'PUT', path: '/webhooks/:id', access: 'any key', params: { id: 'hook' },
    before: ({ params }, { db, who }: Context) => ownWebhook(db, who, params.id),
    body: { schema: UpdateWebhookBody, rules: WEBHOOK_INPUT, optional: true },
    status: 201, response: Webhook, tag, summary: 'Update (and re-enable) a webhook', description: 'Answers 201, as the real API does.',
    handler: ({ body, target }, ctx: Context) => updateWebhook(ctx.db, ctx.who, target, body, healthWorkflows(ctx), reportWebhookUpdate) }),
  defineOperation({ method: 'DELETE', path: '/webhooks/:id', access: 'any key', params: { id: 'hook' },
    status: 200, response: Empty, tag, summary: 'Delete a webhook',
    handler: async ({ params }, ctx: Context) => {
      await deleteWebhook(ctx.db, ctx.who, params.id, healthWorkflows(ctx));
      return {};
    } }),
  // Beyond the specification: health, secret rotation with a grace period, test events.
  defineOperation({ method: 'GET', path: '/webhooks/:id/health', access: 'any key', params: { id: 'hook' },
    status: 200, response: WebhookHealth, tag, summary: 'A webhook\'s health', description: 'The run of failures, the last success and failure, the attempts of the last 24 hours.',
    handler: ({ params }, { db, who }: Context) => webhookHealth(db, who, params.id) }),
  defineOperation({ method: 'POST', path: '/webhooks/:id/rotate_secret', access: 'any key', params: { id: 'hook' },
    body: { schema: RotateSecretBody, rules: ROTATE_SECRET_INPUT, optional: true },
    status: 200, response: WebhookSecret, tag, summary: 'Rotate a webhook\'s secret',
    description: 'The previous secret keeps signing beside the new one (in `webhook-signature`) for a grace period (default 24 h).',
    handler: ({ params, body }, { db, config, who }: Context) => rotateSecret(db, config, who, params.id, body.webhook_secret) }),
  defineOperation({ method: 'POST', path: '/webhooks/:id/test', access: 'any key', params: { id: 'hook' },
    body: { schema: TestEventBody, rules: TEST_EVENT_INPUT, optional: true },
    status: 201, response: DeliveredEvent, tag, summary: 'Send a test event to one webhook',
    description: 'A sample Event of the chosen type, delivered to this webhook only and marked `X-Shiphook-Test: true`.',
    handler: ({ params, body }, { db, who }: Context) => sendTestEvent(db, who, params.id, body.description) }),
  // Recovery: a replay narrowed to the webhook (engine/recovery.ts).
  defineOperation({ method: 'POST', path: '/webhooks/:id/recover', access: 'any key', params: { id: 'hook' }, rateLimit: 'replays', idempotent: true,
    body: { schema: RecoverBody, rules: RECOVER_INPUT },
    status: 202, response: Recovery, tag, summary: 'Redeliver what a webhook missed in a window',
    description: 'Every event of the key\'s user and mode created in [`since`, `until`) whose delivery to this webhook has not succeeded (failed, pending or retrying) is delivered to this webhook again, and only to it. Answers at once with a handle; a disabled webhook must be re-enabled first.',
    links: { 'GET /recoveries/:id': '/id' },
    handler: ({ params, body }, { db, config, who }: Context) => recoverWebhook(db, config, who, params.id, body) }),
  defineOperation({ method: 'GET', path: '/recoveries/:id', access: 'any key', params: { id: 'replay' },
    status: 200, response: Recovery, tag, summary: 'How far a recovery got',
    handler: async ({ params }, { db, who }: Context) => {
      const progress = await recoveryProgress(db, who, params.id);
      if (!progress) throw notFound('Recovery not found.');
      return progress;
    } }),
];
