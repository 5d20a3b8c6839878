import Ajv2020 from 'ajv/dist/2020.js';
import { openapiJson } from '../../src/api/openapi';

/**
 * Contract check of every response the tests receive: the operation of the
 * OpenAPI document for that method and path, its response for that status (or
 * `default`), its schema. Response schemas are strict, so a field the document
 * does not declare fails as surely as a missing or mistyped one.
 */
const doc = JSON.parse(openapiJson()) as { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> };
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, validateSchema: false });
ajv.addSchema(doc, 'openapi.json');

// A literal path wins over a template that also matches it (`/v2/users/children` over `/v2/users/{id}`).
const templates = Object.keys(doc.paths)
  .map((template) => ({ template, params: template.split('{').length, pattern: new RegExp('^' + template.replace(/\{[^}]+\}/g, '[^/]+') + '$') }))
  .sort((a, b) => a.params - b.params);

const pointer = (...parts: string[]) => parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

function validatorFor(path: string[]) {
  const ref = `openapi.json#/${pointer(...path)}`;
  const fn = ajv.getSchema(ref);
  if (!fn) throw new Error(`contract: no schema at ${ref}`);
  return fn;
}

/** Throws when the response does not match the document; returns nothing when it does. */
export function checkResponse(method: string, pathname: string, status: number, body: unknown): void {
  const path = pathname.replace(/\/{2,}/g, '/');
  const template = templates.find((t) => t.pattern.test(path))?.template;
  const operation = template ? doc.paths[template]![method.toLowerCase()] : undefined;
  if (!operation) {
    // Unknown routes and methods answer the error body, like everything else.
    if (status >= 400) return assertValid(validatorFor(['components', 'schemas', 'Error']), body, `${method} ${path} → ${status}`);
    throw new Error(`contract: ${method} ${path} answered ${status} but is not an operation of the OpenAPI document`);
  }
  const key = operation.responses[String(status)] ? String(status) : operation.responses.default ? 'default' : undefined;
  if (!key) throw new Error(`contract: ${method} ${template} answered ${status}, which the document does not list`);
  const content = operation.responses[key]!.content;
  if (!content) {
    if (body !== undefined) throw new Error(`contract: ${method} ${template} → ${status} has no body in the document but answered ${JSON.stringify(body).slice(0, 200)}`);
    return;
  }
  assertValid(validatorFor(['paths', template!, method.toLowerCase(), 'responses', key, 'content', 'application/json', 'schema']), body, `${method} ${template} → ${status}`);
}

/** Throws when a stream of server-sent events does not match the document: an operation that streams, each event's data its schema. */
export function checkStream(method: string, pathname: string, status: number, text: string): void {
  const path = pathname.replace(/\/{2,}/g, '/');
  const template = templates.find((t) => t.pattern.test(path))?.template;
  const streamed = template ? doc.paths[template]![method.toLowerCase()]?.responses[String(status)]?.content?.['text/event-stream'] : undefined;
  if (!streamed) throw new Error(`contract: ${method} ${path} → ${status} answered a stream of events, which the document does not list`);
  const validate = validatorFor(['paths', template!, method.toLowerCase(), 'responses', String(status), 'content', 'text/event-stream', 'schema']);
  for (const block of text.split('\n\n')) {
    const data = block.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
    if (data) assertValid(validate, JSON.parse(data), `${method} ${template} → ${status} event`);
  }
}

/** Throws when a delivery's body does not match the document's webhook of its type (the event catalogue). */
export function checkDelivery(body: { description: string; [field: string]: unknown }): void {
  assertValid(validatorFor(['webhooks', body.description, 'post', 'requestBody', 'content', 'application/json', 'schema']), body, `webhook ${body.description}`);
}

function assertValid(validate: ReturnType<typeof ajv.compile>, body: unknown, what: string): void {
  if (validate(body)) return;
  const problems = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(root)'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` '${e.params.additionalProperty}'` : ''}`);
  throw new Error(`contract: ${what} does not match the OpenAPI document: ${problems.join('; ')}\n${JSON.stringify(body).slice(0, 500)}`);
}

/**
 * What the api serves beside the API the document describes: the docs page, the
 * customer portal (HTML), Prometheus metrics (text) and the health probes.
 */
const OUTSIDE_THE_DOCUMENT = /^\/(docs|portal)(\/|$)|^\/(metrics|healthz|readyz)$/;

/**
 * Watches every response the test server sends, whoever asked (call(), fetch, the
 * official clients), and records those that break the document; the system's
 * `close()` fails the test file with them.
 */
export function watchResponses(server: import('node:http').Server, violations: string[]): void {
  server.prependListener('request', (req, res) => {
    const chunks: Buffer[] = [];
    const url = req.url ?? '/'; // routers rewrite req.url on the way
    const { write, end } = res;
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') {
        chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
      }
    };
    res.write = function (this: typeof res, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof res.write;
    res.end = function (this: typeof res, chunk?: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (end as (...a: unknown[]) => typeof res).call(this, chunk, ...rest);
    } as typeof res.end;
    res.on('finish', () => {
      const path = new URL(url.replace(/^\/+/, '/'), 'http://x').pathname;
      if (OUTSIDE_THE_DOCUMENT.test(path) || req.method === 'HEAD') return;
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        const type = String(res.getHeader('content-type') ?? '');
        if (type.startsWith('text/event-stream')) return checkStream(req.method ?? 'GET', path, res.statusCode, text);
        if (text && !type.startsWith('application/json')) throw new Error(`contract: ${req.method} ${path} → ${res.statusCode} answered ${type || 'no content type'}, not JSON`);
        checkResponse(req.method ?? 'GET', path, res.statusCode, text ? JSON.parse(text) : undefined);
      } catch (err) {
        violations.push((err as Error).message.slice(0, 1000));
      }
    });
  });
}
