import { describe, expect, expectTypeOf, it } from 'vitest';
import { ApiError } from '../src/errors/api-error';
import { defineOperation, type PathParams } from '../src/operation';
import { z } from '../src/schema';

/** The declaration kit alone: what a declared operation reads, in which order, and what its handler is given. */
const Body = z.object({ thing: z.object({ name: z.string({ error: 'is required' }), size: z.number().optional() }, { error: 'must be an object' }) });
const NameOnly = z.object({ thing: z.object({ name: z.string({ error: 'is required' }) }, { error: 'must be an object' }) });
const Query = z.object({ limit: z.string().regex(/^\d+$/, 'must be digits').optional() }).transform((q) => ({ limit: Number(q.limit ?? 10) }));

const calls: string[] = [];
const op = defineOperation({
  method: 'PATCH', path: '/things/:id/parts/:part_id', access: 'any key', params: { id: 'hook', part_id: 'evt' },
  query: { schema: Query, rules: { code: 'PARAMETER.FORBIDDEN' } },
  before: ({ params, query }, ctx: { known: string[] }) => {
    calls.push(`before ${params.id} ${query.limit}`);
    if (!ctx.known.includes(params.id)) throw new ApiError('NOT_FOUND', 'Thing not found.');
    return { id: params.id, small: params.id.startsWith('small') };
  },
  body: { schema: Body, rules: { code: 'WEBHOOK.INVALID', message: 'The thing could not be saved.', wrapper: 'thing' }, schemaFor: (target) => (target.small ? NameOnly : Body) },
  status: 201,
  tag: 'Things', summary: 'Change a thing',
  handler: async ({ params, query, body, target }, ctx) => {
    calls.push('handler');
    expectTypeOf(body.thing.name).toEqualTypeOf<string>();
    expectTypeOf(query.limit).toEqualTypeOf<number>();
    expectTypeOf(params).toEqualTypeOf<Record<'id' | 'part_id', string>>();
    return { id: target.id, part: params.part_id, limit: query.limit, body, known: ctx.known.length };
  },
});

const raw = (body: unknown, id = 'big', query: Record<string, string> = {}) => ({ params: { id, part_id: 'p1' }, query, body });
const failure = async (promise: Promise<unknown>) => {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  return (err as ApiError).toBody().error;
};

describe('defineOperation', () => {
  it('keeps the declaration for the router and the document, without the handler', () => {
    expect(op).toMatchObject({ method: 'PATCH', path: '/things/:id/parts/:part_id', access: 'any key', status: 201, tag: 'Things', params: { id: 'hook', part_id: 'evt' } });
    expect(op.body?.schema).toBe(Body);
    expect(op.query?.schema).toBe(Query);
    expect('handler' in op).toBe(false);
  });

  it('hands the handler the parsed query, path parameters, body, what `before` found, and the context', async () => {
    calls.length = 0;
    const out = await op.run(raw({ thing: { name: 'x', size: 2, extra: true } }, 'big', { limit: '5' }), { known: ['big'] });
    expect(out).toEqual({ id: 'big', part: 'p1', limit: 5, body: { thing: { name: 'x', size: 2 } }, known: 1 });
    expect(calls).toEqual(['before big 5', 'handler']);
  });

  it('reads the query first, then runs `before`, then reads the body: a missing target wins over a bad body', async () => {
    calls.length = 0;
    expect(await failure(op.run(raw({ thing: 'nope' }, 'big', { limit: 'x' }), { known: [] }))).toMatchObject({ code: 'PARAMETER.FORBIDDEN', errors: [{ field: 'limit', message: 'must be digits' }] });
    expect(calls).toEqual([]);
    expect(await failure(op.run(raw({ thing: 'nope' }, 'gone'), { known: [] }))).toMatchObject({ code: 'NOT_FOUND' });
    expect(calls).toEqual(['before gone 10']);
  });

  it('answers a bad body with the declared rules: wrapper, catalogue code, message, fields as the client sent them (wrapper included)', async () => {
    expect(await failure(op.run(raw({}), { known: ['big'] }))).toEqual({
      code: 'PARAMETER.REQUIRED', message: 'Missing required parameter.', errors: [{ field: 'thing', message: 'cannot be blank' }],
    });
    expect(await failure(op.run(raw({ thing: { size: 'x' } }), { known: ['big'] }))).toMatchObject({
      code: 'WEBHOOK.INVALID', message: 'The thing could not be saved.', errors: [{ field: 'thing.name', message: 'is required' }, { field: 'thing.size' }],
    });
  });

  it('reads the body with the schema its target allows (schemaFor)', async () => {
    const out = (await op.run(raw({ thing: { name: 'x', size: 'ignored' } }, 'small-one'), { known: ['small-one'] })) as { body: unknown };
    expect(out.body).toEqual({ thing: { name: 'x' } });
  });

  it('names the path parameters in the types', () => {
    expectTypeOf<PathParams<'/events/:id/payloads/:payload_id'>>().toEqualTypeOf<'id' | 'payload_id'>();
    expectTypeOf<PathParams<'/webhooks'>>().toEqualTypeOf<never>();
  });
});

describe('the operations declared idempotent', () => {
  it('are exactly those that create something or buy, as docs/api.md lists them', async () => {
    const { CALLER_BASE, CALLER_OPERATIONS, OPERATOR_BASE, OPERATOR_OPERATIONS } = await import('../src/api/operations');
    const all = [...CALLER_OPERATIONS.map((o) => [CALLER_BASE, o] as const), ...OPERATOR_OPERATIONS.map((o) => [OPERATOR_BASE, o] as const)];
    const marked = all.filter(([, o]) => o.idempotent).map(([base, o]) => `${o.method} ${base}${o.path}`);
    expect(marked.sort()).toEqual(
      [
        'POST /v2/webhooks', 'POST /v2/webhooks/:id/recover', 'POST /v2/api_keys', 'POST /v2/end_shippers', 'POST /v2/shipments',
        'POST /v2/shipments/:id/buy', 'POST /v2/users', 'POST /v2/events/:id/replay',
        'POST /admin/v1/events', 'POST /admin/v1/events/batch', 'POST /admin/v1/events/replay',
        'POST /admin/v1/operational_webhooks', 'POST /admin/v1/operational_events/:id/replay',
      ].sort(),
    );
  });
});
