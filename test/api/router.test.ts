import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALLER_BASE, CALLER_OPERATIONS, OPERATOR_BASE, OPERATOR_OPERATIONS } from '../../src/api/operations';
import { openapiJson } from '../../src/api/openapi';
import { operationRouter } from '../../src/api/router';
import { ApiError } from '../../src/errors/api-error';
import { defineOperation, type Operation } from '../../src/operation';
import { z } from '../../src/schema';

/**
 * The router and the OpenAPI document come from one list of declarations: every
 * declared operation is routed and documented as declared, nothing else is, and a
 * path's other methods answer 405.
 */
const doc = JSON.parse(openapiJson());
const BASES: [string, readonly Operation<never>[]][] = [[CALLER_BASE, CALLER_OPERATIONS], [OPERATOR_BASE, OPERATOR_OPERATIONS]];
const openapiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');
const keysOf = (schema: z.ZodType) => Object.keys((schema as unknown as { shape?: object }).shape ?? (schema as unknown as { in: { shape: object } }).in.shape);

describe('the OpenAPI document', () => {
  it('lists every declared operation with its status, response, request parts and who may call it', () => {
    for (const [base, operations] of BASES) {
      for (const op of operations) {
        const name = `${op.method} ${base}${op.path}`;
        const documented = doc.paths[base + openapiPath(op.path)]?.[op.method.toLowerCase()];
        expect(documented, name).toBeDefined();
        const success = documented.responses[String(op.status)];
        expect(success, name).toBeDefined();
        expect(Object.keys(success.content ?? {}), name).toEqual(op.stream ? ['text/event-stream'] : op.response ? ['application/json'] : []);
        expect(Boolean(documented.requestBody), name).toBe(op.body !== undefined);
        if (op.body) expect(documented.requestBody.required, name).toBe(!op.body.optional);
        const parameters = (documented.parameters ?? []) as { name: string; in: string }[];
        expect(parameters.filter((p) => p.in === 'path').map((p) => p.name), name).toEqual(Object.keys(op.params ?? {}));
        expect(parameters.filter((p) => p.in === 'query').map((p) => p.name), name).toEqual(op.query ? keysOf(op.query.schema) : []);
        expect(documented.security, name).toEqual(op.access === 'operator' ? [{ operatorToken: [] }] : [{ basicAuth: [] }, { bearerAuth: [] }]);
        expect(documented.description?.includes('Production keys only') ?? false, name).toBe(op.access === 'production key');
        expect(documented.description?.includes('Test keys only') ?? false, name).toBe(op.access === 'test key');
        expect(documented.tags, name).toEqual([op.tag]);
      }
    }
  });

  it('lists nothing that is not declared (but itself)', () => {
    const declared = BASES.flatMap(([base, operations]) => operations.map((op) => `${op.method.toLowerCase()} ${base}${openapiPath(op.path)}`));
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops as object).map((method) => `${method} ${path}`));
    expect(listed.sort()).toEqual([...declared, 'get /v2/openapi.json'].sort());
  });

  it('links only to declared operations', () => {
    const ids = new Set(Object.values(doc.paths).flatMap((ops) => Object.values(ops as Record<string, { operationId: string }>).map((o) => o.operationId)));
    const links = Object.values(doc.paths).flatMap((ops) => Object.values(ops as Record<string, { responses: Record<string, { links?: object }> }>)).flatMap((o) => Object.values(o.responses).flatMap((r) => Object.values(r.links ?? {})));
    expect(links.length).toBeGreaterThan(0);
    for (const link of links as { operationId: string }[]) expect(ids).toContain(link.operationId);
  });
});

describe('the router of the real lists', () => {
  it('routes exactly the declared methods and paths, in the declared order of paths', () => {
    for (const [, operations] of BASES) {
      const router = operationRouter(operations, () => undefined as never, async () => ({ status: 200, body: {} }));
      // Route layers only: the router ends with the error layer that keeps the route template.
      const layers = (router as unknown as { stack: { route?: { path: string; methods: Record<string, boolean> } }[] }).stack;
      const routes = layers.flatMap((layer) => (layer.route ? [layer.route] : []));
      const paths = [...new Set(operations.map((op) => op.path))];
      expect(routes.map((r) => r.path)).toEqual(paths);
      for (const route of routes) {
        const methods = Object.keys(route.methods).filter((m) => m !== '_all' && m !== 'head').sort();
        expect(methods, route.path).toEqual(operations.filter((op) => op.path === route.path).map((op) => op.method.toLowerCase()).sort());
      }
    }
  });
});

describe('a router built from declarations', () => {
  const Thing = z.strictObject({ id: z.string(), name: z.string() });
  const things = [
    defineOperation({
      method: 'GET', path: '/things/:id', access: 'any key', params: { id: 'hook' }, status: 200, response: Thing, tag: 'Things', summary: 'Get',
      handler: async ({ params }, ctx: { prefix: string }) => ({ id: params.id, name: `${ctx.prefix} thing` }),
    }),
    defineOperation({
      method: 'PUT', path: '/things/:id', access: 'any key', params: { id: 'hook' }, status: 201, response: Thing, tag: 'Things', summary: 'Put',
      body: { schema: z.object({ name: z.string({ error: 'is required' }) }), rules: { code: 'WEBHOOK.INVALID' } },
      handler: async ({ params, body }) => ({ id: params.id, name: body.name }),
    }),
    defineOperation({
      method: 'DELETE', path: '/things/:id', access: 'any key', params: { id: 'hook' }, status: 204, tag: 'Things', summary: 'Delete',
      handler: async () => undefined,
    }),
  ];
  let server: Server;
  let base: string;
  const guarded: string[] = [];

  beforeAll(async () => {
    const app = express();
    app.use(express.json());
    // A runner that notes which operation it runs, then runs it as the real ones do.
    app.use(operationRouter(things, () => ({ prefix: 'a' }), async (op, ctx, call) => {
      guarded.push(op.method);
      return { status: op.status, body: await op.run(call, ctx) };
    }));
    app.use((req) => {
      throw new ApiError('NOT_FOUND', `No route for ${req.method} ${req.path}.`);
    });
    app.use(((err, _req, res, _next) => res.status(err.status).json(err.toBody())) as ErrorRequestHandler);
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('answers each declared method with its status and body, after its guards', async () => {
    const got = await fetch(`${base}/things/t1`);
    expect([got.status, await got.json()]).toEqual([200, { id: 't1', name: 'a thing' }]);
    const put = await fetch(`${base}/things/t1`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"name":"n"}' });
    expect([put.status, await put.json()]).toEqual([201, { id: 't1', name: 'n' }]);
    const bad = await fetch(`${base}/things/t1`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect([bad.status, (await bad.json()).error.code]).toEqual([422, 'WEBHOOK.INVALID']);
    const del = await fetch(`${base}/things/t1`, { method: 'DELETE' });
    expect([del.status, await del.text()]).toEqual([204, '']);
    expect(guarded).toEqual(['GET', 'PUT', 'PUT', 'DELETE']);
  });

  it('answers an undeclared method of a declared path 405 with Allow, and leaves undeclared paths to the 404', async () => {
    const post = await fetch(`${base}/things/t1`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, PUT, DELETE');
    expect((await post.json()).error).toEqual({ code: 'METHOD_NOT_ALLOWED', message: 'Method not supported for /things/:id; use GET, PUT, DELETE.', errors: [] });
    const other = await fetch(`${base}/others/t1`);
    expect([other.status, (await other.json()).error.code]).toEqual([404, 'NOT_FOUND']);
  });
});
