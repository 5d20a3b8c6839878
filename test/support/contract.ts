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

const templates = Object.keys(doc.paths).map((template) => ({
  template,
  pattern: new RegExp('^' + template.replace(/\{[^}]+\}/g, '[^/]+') + '$'),
}));

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

function assertValid(validate: ReturnType<typeof ajv.compile>, body: unknown, what: string): void {
  if (validate(body)) return;
  const problems = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(root)'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` '${e.params.additionalProperty}'` : ''}`);
  throw new Error(`contract: ${what} does not match the OpenAPI document: ${problems.join('; ')}\n${JSON.stringify(body).slice(0, 500)}`);
}
