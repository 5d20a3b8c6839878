import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { deliveredExample, EVENT_RESULTS } from '../events/catalogue/results';
import { DeliveredEvent } from '../events/events.schema';
import { EVENT_TYPE_CATALOGUE, EVENT_TYPES, type EventType } from '../events/types';
import { z } from '../schema';

/**
 * The `webhooks` of the OpenAPI document: the event catalogue as a receiver sees it,
 * one entry per event type — the POST it gets (headers, and the Event with that type's
 * `result` and example) and the answer it owes.
 */

/** A header of every delivery (`required`), or of some (signatures need a secret). */
const header = (name: string, required: boolean, description: string, example: string) => ({ name, in: 'header' as const, required, description, schema: { type: 'string' as const }, example });

/** The headers a receiver gets: components of the document, referenced by each type's entry. */
const DELIVERY_HEADERS = {
  WebhookId: header('webhook-id', true, 'The event\'s id (`evt_…`), the same on every attempt, retry and replay of the event: deduplicate by it (Standard Webhooks).', 'evt_019c174ee34c7af3854df1d9b44efbf9'),
  WebhookTimestamp: header('webhook-timestamp', true, 'When this attempt was sent, in Unix seconds, signed with the body: refuse one far from your clock so a captured request cannot be replayed.', '1769860800'),
  EventType: header('X-Shiphook-Event-Type', true, 'The event type, as in the body\'s `description`: route without parsing the body.', 'tracker.updated'),
  Attempt: header('X-Shiphook-Attempt', true, 'This attempt\'s number, 1 for the first; the attempt\'s Payload records the same number.', '1'),
  DeliveryId: header('X-Shiphook-Delivery-Id', true, 'This attempt\'s id (`payload_…`): `GET /v2/events/{webhook-id}/payloads/{X-Shiphook-Delivery-Id}` shows the request as sent and the answer. Deduplicate by `webhook-id`, not by this.', 'payload_019c16f883807f1683635c3920c4ed1a'),
  WebhookSignature: header('webhook-signature', false, 'With a webhook secret: `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`; during a secret rotation\'s grace period a second one, space-separated, for the previous secret (Standard Webhooks).', 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='),
  HmacSignature: header('X-Hmac-Signature', false, 'With a webhook secret: `hmac-sha256-hex=<lowercase hex HMAC-SHA256 of the exact body>`, keyed by the secret normalised to NFKD (the API specification, 5; what the official clients\' `validateWebhook` checks).', 'hmac-sha256-hex=5f0c8a4a0b9c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c'),
  TestEvent: header('X-Shiphook-Test', false, '`true` on a test event (`POST /v2/webhooks/{id}/test`); absent otherwise.', 'true'),
};

const DELIVERY = [
  'Sent as a `POST` with `Content-Type: application/json`, `Accept: application/json` and `User-Agent: shiphook/<version>`, the webhook\'s custom headers, and `Authorization: Basic …` when its URL carries credentials.',
  'At least once: the same event can come again (a retry, a replay), with the same `webhook-id`.',
].join(' ');

/** `shipment.invoice.created` → `shipmentInvoiceCreated`. */
const operationIdOf = (type: EventType) => type.replace(/[._](\w)/g, (_m, c: string) => c.toUpperCase());

export function registerWebhooks(registry: OpenAPIRegistry): void {
  for (const [component, parameter] of Object.entries(DELIVERY_HEADERS)) registry.registerComponent('parameters', `${component}Header`, parameter);
  const parameters = Object.keys(DELIVERY_HEADERS).map((component) => ({ $ref: `#/components/parameters/${component}Header` }));
  for (const type of EVENT_TYPES) {
    const event = z.strictObject({ ...DeliveredEvent.shape, description: z.literal(type), result: EVENT_RESULTS[type].result });
    registry.registerWebhook({
      method: 'post',
      path: type,
      operationId: operationIdOf(type),
      summary: EVENT_TYPE_CATALOGUE[type],
      description: DELIVERY,
      security: [],
      parameters,
      request: {
        body: { required: true, description: `The Event, \`description\` \`${type}\`, with its \`result\`.`, content: { 'application/json': { schema: event, example: deliveredExample(type) } } },
      },
      responses: {
        '2XX': { description: 'Acknowledged (200 preferred): delivered to this URL. The body is ignored.' },
        default: {
          description: 'Any other status, a redirect, or no answer within the attempt timeout fails the attempt: it is retried on the retry schedule; sustained failures disable the webhook, and 410 Gone disables it at once.',
        },
      },
    });
  }
}
