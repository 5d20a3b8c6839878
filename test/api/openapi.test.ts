import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPE_CATALOGUE, EVENT_TYPES } from '../../src/events/types';
import type { ProvisionedTool } from '../../src/launcher/python-tool';
import { openapiSpecValidator } from '../support/python-tools';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
let doc: any;
let validator: ProvisionedTool;

beforeAll(async () => {
  [sys, validator] = await Promise.all([startSystem(), openapiSpecValidator()]);
});
afterAll(() => sys.close());

/** The validator's verdict on a document: its exit status and output. */
function validate(document: unknown): { status: number | null; output: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'shiphook-openapi-'));
  try {
    const file = path.join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const run = spawnSync(validator.bin, [file], { encoding: 'utf8', env: { ...process.env, ...validator.env } });
    return { status: run.status, output: run.stderr + run.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A parameter of the document, its reference followed. */
const parameterOf = (p: { $ref?: string }) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()!] : p);

/** Every operation of the API specification (section 4), as the document must list it. */
const SPECIFICATION_OPERATIONS = [
  'post /v2/api_keys', 'post /v2/api_keys/{id}/disable', 'post /v2/api_keys/{id}/enable', 'get /v2/api_keys', 'delete /v2/api_keys/{id}',
  'post /v2/webhooks', 'get /v2/webhooks', 'get /v2/webhooks/{id}', 'patch /v2/webhooks/{id}', 'delete /v2/webhooks/{id}',
  'get /v2/events', 'get /v2/events/{id}',
  'post /v2/end_shippers', 'get /v2/end_shippers', 'get /v2/end_shippers/{id}', 'put /v2/end_shippers/{id}', 'post /v2/shipments/{id}/buy',
  'get /v2/users', 'get /v2/users/{id}', 'patch /v2/users', 'patch /v2/users/{id}',
];
const SHIPHOOK_OPERATIONS = [
  'get /v2/events/{id}/payloads', 'get /v2/events/{id}/payloads/{payload_id}', 'post /v2/events/{id}/replay',
  'post /v2/users', 'get /v2/users/children', 'delete /v2/users/{id}', 'post /v2/shipments', 'get /v2/shipments/{id}',
  'post /admin/v1/users', 'patch /admin/v1/users/{id}', 'post /admin/v1/events', 'post /admin/v1/events/replay',
  'post /v2/events/trigger', 'post /v2/listeners', 'get /v2/listeners', 'delete /v2/listeners/{id}', 'get /v2/listeners/{id}/stream',
  'post /v2/listeners/{id}/requests/{request_id}/answer',
];

describe('GET /v2/openapi.json', () => {
  it('is served without authentication as JSON', async () => {
    const res = await fetch(`${sys.baseUrl}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    doc = await res.json();
    expect(doc.openapi).toBe('3.1.0');
  });

  it('answers 405 with Allow: GET to other methods (a fuzzer finding: TRACE was 404)', async () => {
    for (const method of ['TRACE', 'POST', 'DELETE']) {
      const res = await request(`${sys.baseUrl}/openapi.json`, { method }); // fetch refuses TRACE
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('GET');
      expect(((await res.body.json()) as any).error.code).toBe('METHOD_NOT_ALLOWED');
    }
  });

  it('documents what is accepted: valueless query parameters, bodies that may be left out (fuzzer findings)', () => {
    for (const name of ['page_size', 'before_id', 'after_id', 'start_datetime', 'end_datetime']) {
      const param = doc.paths['/v2/events'].get.parameters.find((p: any) => p.name === name);
      expect(param.schema.anyOf, name).toContainEqual({ type: 'string', enum: [''] });
    }
    expect(doc.paths['/v2/webhooks/{id}'].patch.requestBody.required).toBe(false);
    expect(doc.paths['/v2/events/{id}/replay'].post.requestBody.required).toBe(false);
    expect(doc.paths['/admin/v1/users/{id}'].patch.requestBody.required).toBe(false);
    expect(doc.paths['/v2/webhooks'].post.requestBody.required).toBe(true);
  });

  it('is accepted by openapi-spec-validator (PyPI), which checks its webhooks too', () => {
    const valid = validate(doc);
    expect(valid.output).toMatch(/OK/);
    expect(valid.status).toBe(0);
    // The validator reads the webhooks: one that breaks the specification fails the document.
    const broken = structuredClone(doc);
    broken.webhooks['tracker.updated'].post.requestBody.content = 'application/json';
    const refused = validate(broken);
    expect(refused.status).not.toBe(0);
    expect(refused.output).toMatch(/webhooks/);
  });

  it('publishes the event catalogue as webhooks: per type, the Event with its result schema and example, the headers and the 2XX answer', () => {
    expect(Object.keys(doc.webhooks)).toEqual(EVENT_TYPES);
    const ajv = new Ajv2020({ strict: false, validateFormats: false, validateSchema: false });
    ajv.addSchema(doc, 'openapi.json');
    for (const type of EVENT_TYPES) {
      const post = doc.webhooks[type].post;
      expect(post.summary, type).toBe(EVENT_TYPE_CATALOGUE[type]);
      const body = post.requestBody.content['application/json'];
      expect(Object.keys(body.schema.properties).sort(), type).toEqual(
        ['id', 'object', 'mode', 'description', 'status', 'previous_attributes', 'pending_urls', 'completed_urls', 'created_at', 'updated_at', 'result'].sort(),
      );
      expect(body.schema.properties.description.enum, type).toEqual([type]);
      expect(body.schema.properties.result.$ref, type).toMatch(/^#\/components\/schemas\/\w+Result$/);
      expect(doc.components.schemas[body.schema.properties.result.$ref.split('/').pop()].additionalProperties, type).toEqual({}); // open
      const validateBody = ajv.getSchema(`openapi.json#/webhooks/${type}/post/requestBody/content/application~1json/schema`)!;
      expect(validateBody(body.example), `${type}: ${JSON.stringify(validateBody.errors)}`).toBe(true);
      expect(body.example.result.id, type).toMatch(/^[a-z]+_[0-9a-f]{32}$/);
      const headers = Object.fromEntries(post.parameters.map(parameterOf).map((p: any) => [p.name, p.in === 'header' && p.required]));
      expect(headers, type).toEqual({
        'webhook-id': true, 'webhook-timestamp': true, 'X-Shiphook-Event-Type': true, 'X-Shiphook-Attempt': true, 'X-Shiphook-Delivery-Id': true,
        'webhook-signature': false, 'X-Hmac-Signature': false, 'X-Shiphook-Test': false,
      });
      expect(Object.keys(post.responses), type).toContain('2XX');
    }
    expect(doc.components.schemas.BatchResult.required).toEqual(expect.arrayContaining(['state', 'num_shipments', 'reference', 'scan_form', 'shipments', 'status', 'pickup', 'label_url']));
    expect(Object.keys(doc.components.schemas.BatchResult.properties.status.properties)).toEqual(['created', 'queued_for_purchase', 'creation_failed', 'postage_purchased', 'postage_purchase_failed']);
  });

  it('lists every operation of the API specification and every one shiphook adds, each with its success and error responses', () => {
    const listed = Object.entries(doc.paths).flatMap(([p, ops]: [string, any]) => Object.keys(ops).map((m) => `${m} ${p}`));
    for (const op of [...SPECIFICATION_OPERATIONS, ...SHIPHOOK_OPERATIONS]) expect(listed).toContain(op);
    for (const op of [...SPECIFICATION_OPERATIONS, ...SHIPHOOK_OPERATIONS]) {
      const [method, p] = op.split(' ');
      const responses = doc.paths[p!][method!].responses;
      expect(Object.keys(responses).some((s) => /^2\d\d$/.test(s)), op).toBe(true);
      expect(responses['422'].content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
    }
    // A streamed answer is declared as one: server-sent events whose data has a schema.
    expect(doc.paths['/v2/listeners/{id}/stream'].get.responses['200'].content['text/event-stream'].schema.$ref).toBe('#/components/schemas/ListenerStreamEvent');
    expect(doc.paths['/v2/events/trigger'].post.description).toContain('Test keys only');
  });

  it('declares both auth schemes for /v2 and the operator token for /admin/v1', () => {
    expect(doc.components.securitySchemes).toMatchObject({
      basicAuth: { type: 'http', scheme: 'basic' },
      bearerAuth: { type: 'http', scheme: 'bearer' },
      operatorToken: { type: 'http', scheme: 'bearer' },
    });
    expect(doc.paths['/v2/webhooks'].get.security).toEqual([{ basicAuth: [] }, { bearerAuth: [] }]);
    expect(doc.paths['/admin/v1/users'].post.security).toEqual([{ operatorToken: [] }]);
  });

  it('describes every response object strictly, the error body, pagination and examples', () => {
    const s = doc.components.schemas;
    for (const name of ['ApiKey', 'ApiKeys', 'Webhook', 'Event', 'EventSummary', 'EndShipper', 'User', 'ChildUser', 'Shipment', 'Payload', 'Error']) {
      expect(s[name].additionalProperties, name).toBe(false);
    }
    expect(Object.keys(s.User.properties)).toEqual(expect.arrayContaining(['balance', 'price_per_shipment', 'recharge_amount', 'cc_fee_rate', 'insurance_fee_minimum', 'email', 'children']));
    expect(s.Error.properties.error.required).toEqual(['code', 'message', 'errors']);
    const page = doc.paths['/v2/end_shippers'].get.parameters.map((p: any) => p.name);
    expect(page).toEqual(['page_size', 'before_id', 'after_id', 'start_datetime', 'end_datetime']);
    expect(doc.paths['/v2/events'].get.parameters.find((p: any) => p.name === 'page_size').schema.anyOf[0]).toMatchObject({ type: 'integer', maximum: 100 });
    const example = doc.paths['/v2/end_shippers'].post.requestBody.content['application/json'].schema.example;
    expect(example.address).toMatchObject({ street1: '388 Townsend St', country: 'US' });
  });
});
