import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { type IdPrefix, idPattern } from '../ids';
import type { Access, Operation } from '../operation';
import { z } from '../schema';
import { VERSION } from '../version';
import { KEY_FORMAT } from '../idempotency/key-material';
import { CALLER_BASE, CALLER_OPERATIONS, OPERATOR_BASE, OPERATOR_OPERATIONS } from './operations';
import { registerWebhooks } from './openapi-webhooks';
import { EVENT_STREAM } from './event-stream';

/**
 * The OpenAPI 3.1 document of the API, generated from the operations' declarations
 * (the resources' operations.ts) and the zod schemas that validate their requests:
 * every operation of the API specification and what shiphook adds. Served at
 * GET /v2/openapi.json and rendered at /docs.
 */

const ErrorItem = z.union([
  z.strictObject({ field: z.string(), message: z.string(), suggestion: z.string().optional() }),
  z.string(),
]);
export const ErrorBody = z
  .strictObject({
    error: z.strictObject({
      code: z.string().openapi({ example: 'WEBHOOK.INVALID', description: 'A code of the API specification\'s error catalogue (or one shiphook adds: METHOD_NOT_ALLOWED, PAYLOAD.NOT_FOUND, RATE_LIMITED, SERVICE_UNAVAILABLE, IDEMPOTENCY_KEY.*).' }),
      message: z.string().openapi({ example: 'The webhook could not be saved.' }),
      errors: z.array(ErrorItem).openapi({ description: 'Field errors `{field, message}`, or plain strings: check the item type before reading.' }),
    }),
  })
  .openapi('Error', { example: { error: { code: 'WEBHOOK.INVALID', message: 'The webhook could not be saved.', errors: [{ field: 'webhook.custom_headers[1].name', message: 'must be unique (names are case-insensitive)' }] } } });

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

/** What the document adds to an operation's description for who may call it. */
const ACCESS_TEXT: Partial<Record<Access, string>> = {
  'production key': 'Production keys only (a test key gets 403 `MODE.UNAUTHORIZED`).',
  'test key': 'Test keys only (a production key gets 403 `MODE.CONFLICT`).',
};

const PUBLIC_AUTH: Record<string, string[]>[] = [{ basicAuth: [] }, { bearerAuth: [] }];
const ADMIN_AUTH: Record<string, string[]>[] = [{ operatorToken: [] }];
const ID = (prefix: IdPrefix) => `${prefix}_0192f3a4b5c67d8e9f0a1b2c3d4e5f60`;
/** The header of the operations declared `idempotent` (api/idempotency.ts). */
const IdempotencyHeader = z.object({
  'Idempotency-Key': z.string().regex(KEY_FORMAT).optional().openapi({
    param: { name: 'Idempotency-Key', in: 'header' },
    // No example: a value that must be new for each request has none to copy (a generated client or a fuzzer would reuse it).
    description: 'Any unique value, new for each request (a UUID such as `5f2c7b7e-1c1d-4a47-9a39-1b8c3f1f0c2e`): a retry with the same key and the same request within 24 hours gets the first answer (marked `Idempotent-Replayed: true`) and does nothing again; another request with the key is refused (422 `IDEMPOTENCY_KEY.REUSED`).',
  }),
});
/** Path ids, with their shape: anything else is not found (404). */
const idParams = (params: Record<string, IdPrefix>) =>
  z.object(Object.fromEntries(Object.entries(params).map(([name, prefix]) => [name, z.string().openapi({ param: { name, in: 'path' }, pattern: idPattern(prefix).source, example: ID(prefix) })])));

/** `/webhooks/:id` → `/webhooks/{id}`. */
const openapiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');
const operationId = (op: { method: string; path: string; access: Access }) =>
  `${op.access === 'operator' ? 'admin' : ''}${op.method.toLowerCase()}${op.path}`.replace(/:/g, '').replace(/[/_](\w)/g, (_m, c: string) => c.toUpperCase());

type AnyOperation = Operation<never>;

/** The document's links of an operation's response: each target must be an operation of the same base. */
function linksOf(op: AnyOperation, siblings: readonly AnyOperation[]) {
  if (!op.links) return undefined;
  return Object.fromEntries(
    Object.entries(op.links).map(([target, pointer]) => {
      const linked = siblings.find((s) => `${s.method} ${s.path}` === target);
      if (!linked) throw new Error(`OpenAPI: ${op.method} ${op.path} links to ${target}, which is not declared`);
      const id = operationId(linked);
      return [id, { operationId: id, parameters: { id: `$response.body#${pointer}` } }];
    }),
  );
}

function register(registry: OpenAPIRegistry, base: string, operations: readonly AnyOperation[]): void {
  for (const op of operations) {
    const links = linksOf(op, operations);
    registry.registerPath({
      method: op.method.toLowerCase() as RouteConfig['method'],
      path: base + openapiPath(op.path),
      operationId: operationId(op),
      tags: [op.tag],
      summary: op.summary,
      description: [
        op.sameAs && `The same as \`${op.sameAs} ${base}${openapiPath(op.path)}\`, for clients that cannot send ${op.sameAs} (the official Java client updates with ${op.method}).`,
        op.description,
        ACCESS_TEXT[op.access],
      ].filter(Boolean).join(' ') || undefined,
      security: op.access === 'operator' ? ADMIN_AUTH : PUBLIC_AUTH,
      request: {
        ...(op.params ? { params: idParams(op.params) } : {}),
        ...(op.idempotent ? { headers: IdempotencyHeader } : {}),
        // A page query reads into PageParams (a pipe): the generator documents its input, an object.
        ...(op.query ? { query: op.query.schema as z.ZodObject } : {}),
        ...(op.body ? { body: { required: !op.body.optional, content: json(op.body.schema) } } : {}),
      },
      responses: {
        [op.status]: op.stream
          ? { description: 'A stream of server-sent events (`event:` its name, `data:` one line of JSON of this schema); comment lines keep it alive.', content: { [EVENT_STREAM]: { schema: op.stream } } }
          : op.response ? { description: 'Success.', content: json(op.response), ...(links ? { links } : {}) } : { description: 'Success, no body.' },
        ...ERRORS,
      },
    });
  }
}

export const OPENAPI_PATH = `${CALLER_BASE}/openapi.json`;

function buildDocument() {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'basicAuth', { type: 'http', scheme: 'basic', description: 'The API key as user name, empty password.' });
  registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer', description: 'The API key as bearer token.' });
  registry.registerComponent('securitySchemes', 'operatorToken', { type: 'http', scheme: 'bearer', description: 'The operator API: `SHIPHOOK_ADMIN_TOKEN`.' });
  register(registry, CALLER_BASE, CALLER_OPERATIONS);
  register(registry, OPERATOR_BASE, OPERATOR_OPERATIONS);
  registerWebhooks(registry);
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
    // In the order the operations come, the busiest first.
    tags: [...new Set([...CALLER_OPERATIONS, ...OPERATOR_OPERATIONS].map((op) => op.tag)), 'Reference'].map((name) => ({ name })),
  });
}

let cached: string | undefined;

/** The document as JSON text, built once. */
export function openapiJson(): string {
  cached ??= JSON.stringify(buildDocument());
  return cached;
}
