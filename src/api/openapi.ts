import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { ApiKeys, ApiKey, CreateKeyBody, Empty } from '../account/api-keys.schema';
import { EndShipper, EndShipperBody, EndShipperList } from '../end-shippers/addresses.schema';
import { DeliveredEvent, Event, EventList, NewEventBody, Payload, PayloadList } from '../events/events.schema';
import { BulkReplayBody, DispatchIncidentList, Replay, ReplayBody } from '../engine/replay.schema';
import { PortalSession } from '../portal-sessions/portal-sessions.schema';
import { pageQuery } from './pagination.schema';
import { z } from '../schema';
import { BuyBody, CreateShipmentBody, Shipment } from '../shipments/shipments.schema';
import { AnyUser, ChildList, CreateChildBody, CreatedChild, CreatedParent, NewParentUser, OperatorUserUpdate, ParentUser, UpdateUserBody } from '../account/users.schema';
import { CreateWebhookBody, RotateSecretBody, TestEventBody, UpdateWebhookBody, Webhook, WebhookHealth, WebhookList, WebhookSecret } from '../webhooks/webhooks.schema';
import { VERSION } from '../version';

/**
 * The OpenAPI 3.1 document of the API, generated from the same zod schemas that
 * validate requests (src/domain/*.schema.ts): every operation of seed section 4 and
 * what shiphook adds. Served at GET /v2/openapi.json and rendered at /docs.
 */

const ErrorItem = z.union([
  z.strictObject({ field: z.string(), message: z.string(), suggestion: z.string().optional() }),
  z.string(),
]);
export const ErrorBody = z
  .strictObject({
    error: z.strictObject({
      code: z.string().openapi({ example: 'WEBHOOK.INVALID', description: 'A code of seed section 7 (or one shiphook adds: METHOD_NOT_ALLOWED, PAYLOAD.NOT_FOUND, RATE_LIMITED, SERVICE_UNAVAILABLE).' }),
      message: z.string().openapi({ example: 'The webhook could not be saved.' }),
      errors: z.array(ErrorItem).openapi({ description: 'Field errors `{field, message}`, or plain strings: check the item type before reading.' }),
    }),
  })
  .openapi('Error', { example: { error: { code: 'WEBHOOK.INVALID', message: 'The webhook could not be saved.', errors: [{ field: 'custom_headers[1].name', message: 'must be unique (names are case-insensitive)' }] } } });

const json = (schema: z.ZodType) => ({ 'application/json': { schema } });
const error = (description: string) => ({ description, content: json(ErrorBody) });
const ERRORS = {
  400: error('Client error; request not processed (malformed JSON, a body over 1 MB).'),
  401: error('Authentication required and failed (`UNAUTHORIZED`).'),
  403: error('Valid request refused (`FORBIDDEN`, `MODE.UNAUTHORIZED`, `MODE.CONFLICT`, …).'),
  404: error('Resource not found.'),
  405: error('Method not supported for the resource (`Allow` lists the methods).'),
  422: error('Well-formed request whose data cannot be processed: the field errors say why.'),
  429: error('Too many requests.'),
  503: error('Temporarily unavailable; retry.'),
  default: error('Any other error, with the same body.'),
};

const PUBLIC_AUTH: Record<string, string[]>[] = [{ basicAuth: [] }, { bearerAuth: [] }];
const ADMIN_AUTH: Record<string, string[]>[] = [{ operatorToken: [] }];
const idParams = (...names: [string, string][]) =>
  z.object(Object.fromEntries(names.map(([name, example]) => [name, z.string().openapi({ param: { name, in: 'path' }, example })])));
const ID = (prefix: string) => `${prefix}_0192f3a4b5c67d8e9f0a1b2c3d4e5f60`;

interface Operation {
  method: RouteConfig['method'];
  path: string;
  tag: string;
  summary: string;
  description?: string;
  params?: [string, string][];
  query?: z.ZodObject;
  body?: z.ZodType;
  /** The body may be left out (every field of it is optional). */
  bodyOptional?: boolean;
  status: number;
  response?: z.ZodType;
  admin?: boolean;
  productionOnly?: boolean;
  /** Operations that take an id from this response: operation (`method path`) → JSON pointer into the body. */
  links?: Record<string, string>;
}

const OPERATIONS: Operation[] = [
  // seed 4.1
  { method: 'post', path: '/api_keys', tag: 'API keys', summary: 'Create an API key', description: 'Creates keys for the User and all its children; answers the caller\'s key. ReferralCustomers and children only.', body: CreateKeyBody, status: 201, response: ApiKey, productionOnly: true, links: { 'post /api_keys/{id}/disable': '/id', 'post /api_keys/{id}/enable': '/id', 'delete /api_keys/{id}': '/id' } },
  { method: 'get', path: '/api_keys', tag: 'API keys', summary: 'List API keys', description: 'Both modes; the User and all its children (a child sees only its own keys).', status: 200, response: ApiKeys, productionOnly: true },
  { method: 'post', path: '/api_keys/{id}/disable', tag: 'API keys', summary: 'Disable an API key', params: [['id', ID('ak')]], status: 200, response: ApiKey, productionOnly: true },
  { method: 'post', path: '/api_keys/{id}/enable', tag: 'API keys', summary: 'Enable an API key', params: [['id', ID('ak')]], status: 200, response: ApiKey, productionOnly: true },
  { method: 'delete', path: '/api_keys/{id}', tag: 'API keys', summary: 'Delete an API key', description: 'Answers an empty object (seed 4.1).', params: [['id', ID('ak')]], status: 200, response: Empty, productionOnly: true },
  // seed 4.2
  { method: 'post', path: '/webhooks', tag: 'Webhooks', summary: 'Create a webhook', body: CreateWebhookBody, status: 201, response: Webhook, links: { 'get /webhooks/{id}': '/id', 'patch /webhooks/{id}': '/id', 'delete /webhooks/{id}': '/id' } },
  { method: 'get', path: '/webhooks', tag: 'Webhooks', summary: 'List webhooks', description: 'Unpaginated: all webhooks of the key\'s user and mode.', status: 200, response: WebhookList },
  { method: 'get', path: '/webhooks/{id}', tag: 'Webhooks', summary: 'Retrieve a webhook', params: [['id', ID('hook')]], status: 200, response: Webhook },
  { method: 'patch', path: '/webhooks/{id}', tag: 'Webhooks', summary: 'Update (and re-enable) a webhook', description: 'Answers 201, as the real API does.', params: [['id', ID('hook')]], body: UpdateWebhookBody, bodyOptional: true, status: 201, response: Webhook },
  { method: 'delete', path: '/webhooks/{id}', tag: 'Webhooks', summary: 'Delete a webhook', params: [['id', ID('hook')]], status: 200, response: Empty },
  { method: 'get', path: '/webhooks/{id}/health', tag: 'Webhooks', summary: 'A webhook\'s health', description: 'The run of failures, the last success and failure, the attempts of the last 24 hours.', params: [['id', ID('hook')]], status: 200, response: WebhookHealth },
  { method: 'post', path: '/webhooks/{id}/rotate_secret', tag: 'Webhooks', summary: 'Rotate a webhook\'s secret', description: 'The previous secret keeps signing beside the new one (in `webhook-signature`) for a grace period (default 24 h).', params: [['id', ID('hook')]], body: RotateSecretBody, bodyOptional: true, status: 200, response: WebhookSecret },
  { method: 'post', path: '/webhooks/{id}/test', tag: 'Webhooks', summary: 'Send a test event to one webhook', description: 'A sample Event of the chosen type, delivered to this webhook only and marked `X-Shiphook-Test: true`.', params: [['id', ID('hook')]], body: TestEventBody, bodyOptional: true, status: 201, response: DeliveredEvent },
  { method: 'post', path: '/portal_sessions', tag: 'Webhook portal', summary: 'Open a webhook portal link', description: 'A link that opens the customer webhook portal for this key\'s user and mode, valid for a bounded time (default 1 h), usable without the key.', status: 201, response: PortalSession },
  // seed 4.3 and what shiphook adds
  { method: 'get', path: '/events', tag: 'Events', summary: 'List events', description: 'Newest first; items without `result`, `previous_attributes` and the URLs.', query: pageQuery('evt'), status: 200, response: EventList, links: { 'get /events/{id}': '/events/0/id', 'get /events/{id}/payloads': '/events/0/id', 'post /events/{id}/replay': '/events/0/id' } },
  { method: 'get', path: '/events/{id}', tag: 'Events', summary: 'Retrieve an event', description: 'Without `result`.', params: [['id', ID('evt')]], status: 200, response: Event },
  { method: 'get', path: '/events/{id}/payloads', tag: 'Events', summary: 'List the delivery attempts (Payloads) of an event', params: [['id', ID('evt')]], status: 200, response: PayloadList },
  { method: 'get', path: '/events/{id}/payloads/{payload_id}', tag: 'Events', summary: 'Retrieve one delivery attempt', params: [['id', ID('evt')], ['payload_id', ID('payload')]], status: 200, response: Payload },
  { method: 'post', path: '/events/{id}/replay', tag: 'Events', summary: 'Replay an event', params: [['id', ID('evt')]], body: ReplayBody, bodyOptional: true, status: 200, response: Event },
  // seed 4.4
  { method: 'post', path: '/end_shippers', tag: 'EndShippers', summary: 'Create an EndShipper', body: EndShipperBody, status: 201, response: EndShipper, links: { 'get /end_shippers/{id}': '/id', 'put /end_shippers/{id}': '/id' } },
  { method: 'get', path: '/end_shippers', tag: 'EndShippers', summary: 'List EndShippers', query: pageQuery('es'), status: 200, response: EndShipperList },
  { method: 'get', path: '/end_shippers/{id}', tag: 'EndShippers', summary: 'Retrieve an EndShipper', params: [['id', ID('es')]], status: 200, response: EndShipper },
  { method: 'put', path: '/end_shippers/{id}', tag: 'EndShippers', summary: 'Replace an EndShipper\'s address', description: 'No partial update: every field required at creation is required.', params: [['id', ID('es')]], body: EndShipperBody, status: 200, response: EndShipper },
  { method: 'post', path: '/shipments', tag: 'Shipments', summary: 'Create a shipment (rated by the simulated carrier)', body: CreateShipmentBody, status: 201, response: Shipment, links: { 'get /shipments/{id}': '/id', 'post /shipments/{id}/buy': '/id' } },
  { method: 'get', path: '/shipments/{id}', tag: 'Shipments', summary: 'Retrieve a shipment', params: [['id', ID('shp')]], status: 200, response: Shipment },
  { method: 'post', path: '/shipments/{id}/buy', tag: 'Shipments', summary: 'Buy a shipment with an EndShipper', params: [['id', ID('shp')]], body: BuyBody, status: 200, response: Shipment },
  // seed 4.5 and children
  { method: 'get', path: '/users', tag: 'Users', summary: 'Retrieve the authenticated User', status: 200, response: AnyUser, productionOnly: true },
  { method: 'patch', path: '/users', tag: 'Users', summary: 'Update the authenticated User', body: UpdateUserBody, status: 200, response: AnyUser, productionOnly: true },
  { method: 'post', path: '/users', tag: 'Users', summary: 'Create a child User', description: 'Answers the child with one test and one production key.', body: CreateChildBody, status: 201, response: CreatedChild, productionOnly: true, links: { 'get /users/{id}': '/id', 'patch /users/{id}': '/id', 'delete /users/{id}': '/id' } },
  { method: 'get', path: '/users/children', tag: 'Users', summary: 'List child Users', description: 'Oldest first, paged with `after_id`.', query: pageQuery('user'), status: 200, response: ChildList, productionOnly: true },
  { method: 'get', path: '/users/{id}', tag: 'Users', summary: 'Retrieve a User (the caller or a child)', params: [['id', ID('user')]], status: 200, response: AnyUser, productionOnly: true },
  { method: 'patch', path: '/users/{id}', tag: 'Users', summary: 'Update a User (the caller or a child)', params: [['id', ID('user')]], body: UpdateUserBody, status: 200, response: AnyUser, productionOnly: true },
  { method: 'delete', path: '/users/{id}', tag: 'Users', summary: 'Delete a child User', params: [['id', ID('user')]], status: 204, productionOnly: true },
  // operator API
  { method: 'post', path: '/users', tag: 'Operator', summary: 'Create a parent User with a test and a production key', body: NewParentUser, status: 201, response: CreatedParent, admin: true },
  { method: 'patch', path: '/users/{id}', tag: 'Operator', summary: 'Set a parent User\'s email or password', description: 'Without `current_password`: how an account created without a password gets one.', params: [['id', ID('user')]], body: OperatorUserUpdate, bodyOptional: true, status: 200, response: ParentUser, admin: true },
  { method: 'post', path: '/events', tag: 'Operator', summary: 'Publish an event', body: NewEventBody, status: 201, response: DeliveredEvent, admin: true },
  { method: 'post', path: '/events/replay', tag: 'Operator', summary: 'Replay every event matching a filter', description: 'Answers at once with a handle; the workers\' dispatchers start the matched events again.', body: BulkReplayBody, status: 202, response: Replay, admin: true },
  { method: 'get', path: '/replays/{id}', tag: 'Operator', summary: 'How far a broad replay got', params: [['id', ID('replay')]], status: 200, response: Replay, admin: true },
  { method: 'get', path: '/events/dispatch_incidents', tag: 'Operator', summary: 'List dispatch incidents', description: 'Events whose delivery workflow Temporal refused to start (oldest 100); replay them with `dispatch_failed: true` once the cause is fixed.', status: 200, response: DispatchIncidentList, admin: true },
];

export const OPENAPI_PATH = '/v2/openapi.json';

function buildDocument() {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'basicAuth', { type: 'http', scheme: 'basic', description: 'The API key as user name, empty password.' });
  registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer', description: 'The API key as bearer token.' });
  registry.registerComponent('securitySchemes', 'operatorToken', { type: 'http', scheme: 'bearer', description: 'The operator API: `SHIPHOOK_ADMIN_TOKEN`.' });
  const operationId = (op: Pick<Operation, 'method' | 'path' | 'admin'>) =>
    `${op.admin ? 'admin' : ''}${op.method}${op.path}`.replace(/[{}]/g, '').replace(/[/_](\w)/g, (_m, c: string) => c.toUpperCase());
  for (const op of OPERATIONS) {
    const prefix = op.admin ? '/admin/v1' : '/v2';
    const id = operationId(op);
    const links = op.links
      ? Object.fromEntries(
          Object.entries(op.links).map(([target, pointer]) => {
            const [method, path] = target.split(' ') as [Operation['method'], string];
            return [operationId({ method, path }), { operationId: operationId({ method, path }), parameters: { id: `$response.body#${pointer}` } }];
          }),
        )
      : undefined;
    registry.registerPath({
      method: op.method,
      path: prefix + op.path,
      operationId: id,
      tags: [op.tag],
      summary: op.summary,
      description: [op.description, op.productionOnly ? 'Production keys only (a test key gets 403 `MODE.UNAUTHORIZED`).' : undefined].filter(Boolean).join(' ') || undefined,
      security: op.admin ? ADMIN_AUTH : PUBLIC_AUTH,
      request: {
        ...(op.params ? { params: idParams(...op.params) } : {}),
        ...(op.query ? { query: op.query } : {}),
        ...(op.body ? { body: { required: !op.bodyOptional, content: json(op.body) } } : {}),
      },
      responses: {
        [op.status]: op.response ? { description: 'Success.', content: json(op.response), ...(links ? { links } : {}) } : { description: 'Success, no body.' },
        ...ERRORS,
      },
    });
  }
  registry.registerPath({
    method: 'get',
    path: OPENAPI_PATH,
    operationId: 'getOpenapiDocument',
    tags: ['Reference'],
    summary: 'This document',
    security: [],
    responses: { 200: { description: 'The OpenAPI 3.1 document.', content: json(z.record(z.string(), z.unknown())) } },
  });
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'shiphook API',
      version: VERSION,
      description:
        'API keys, webhooks, events, EndShippers, users and shipments of a shipping platform\'s `/v2` API, plus shiphook\'s operator API (`/admin/v1`). ' +
        'Every error is `{"error": {"code", "message", "errors": []}}`. Free-form objects (`options`, `result`, `previous_attributes`) are at most 32 levels deep with strings of at most 10,000 characters; names, addresses, phone numbers, emails and references at most 255 characters; request bodies at most 1 MB.',
    },
    tags: ['API keys', 'Webhooks', 'Events', 'EndShippers', 'Shipments', 'Users', 'Operator', 'Reference'].map((name) => ({ name })),
  });
}

let cached: string | undefined;

/** The document as JSON text, built once. */
export function openapiJson(): string {
  cached ??= JSON.stringify(buildDocument());
  return cached;
}
