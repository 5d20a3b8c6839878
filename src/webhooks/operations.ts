import type { Config } from '../config';
import type { Caller } from '../account/principal';
import { Empty } from '../account/api-keys.schema';
import { DeliveredEvent } from '../events/events.schema';
import { defineOperation } from '../operation';
import { webhookHealth } from './health';
import { rotateSecret } from './secret-rotation';
import { sendTestEvent } from './test-events';
import { createWebhook, deleteWebhook, getWebhook, listWebhooks, ownWebhook, updateWebhook } from './webhooks';
import {
  CreateWebhookBody, ROTATE_SECRET_INPUT, RotateSecretBody, TEST_EVENT_INPUT, TestEventBody, UpdateWebhookBody, Webhook, WEBHOOK_INPUT,
  WebhookHealth, WebhookList, WebhookSecret,
} from './webhooks.schema';

/** Webhooks (the API specification, 4.2; statuses per COMPATIBILITY.md, 201 for PATCH included), and shiphook's additions. */
type Context = Caller & { config: Config };
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
  defineOperation({ method: 'PATCH', path: '/webhooks/:id', access: 'any key', params: { id: 'hook' },
    before: ({ params }, { db, who }: Context) => ownWebhook(db, who, params.id),
    body: { schema: UpdateWebhookBody, rules: WEBHOOK_INPUT, optional: true },
    status: 201, response: Webhook, tag, summary: 'Update (and re-enable) a webhook', description: 'Answers 201, as the real API does.',
    handler: ({ body, target }, { db, who }: Context) => updateWebhook(db, who, target, body) }),
  defineOperation({ method: 'DELETE', path: '/webhooks/:id', access: 'any key', params: { id: 'hook' },
    status: 200, response: Empty, tag, summary: 'Delete a webhook',
    handler: async ({ params }, { db, who }: Context) => {
      await deleteWebhook(db, who, params.id);
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
];
