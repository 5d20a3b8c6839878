import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';

// The pagination helper, exercised through GET /users/children (oldest first).
let sys: TestSystem;
let acct: Account;
let childIds: string[];

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys);
  childIds = [];
  for (let i = 0; i < 25; i++) {
    const res = await call(sys, 'POST', '/users', { key: acct.prodKey, body: { user: { name: `Child ${i}` } } });
    childIds.push(res.body.id);
  }
});
afterAll(() => sys.close());

const page = (query: string) => call(sys, 'GET', `/users/children${query}`, { key: acct.prodKey });

describe('pagination (the API specification, 4.6)', () => {
  it('defaults to 20 per page, oldest first, with an exact has_more', async () => {
    const first = await page('');
    expect(first.status).toBe(200);
    expect(first.body.children.map((c: any) => c.id)).toEqual(childIds.slice(0, 20));
    expect(first.body.has_more).toBe(true);
    const rest = await page(`?after_id=${childIds[19]}`);
    expect(rest.body.children.map((c: any) => c.id)).toEqual(childIds.slice(20));
    expect(rest.body.has_more).toBe(false);
    const exact = await page(`?page_size=5&after_id=${childIds[19]}`);
    expect(exact.body.children).toHaveLength(5);
    expect(exact.body.has_more).toBe(false);
  });

  it('honours page_size up to 100 and before_id', async () => {
    const all = await page('?page_size=100');
    expect(all.body.children).toHaveLength(25);
    expect(all.body.has_more).toBe(false);
    const before = await page(`?page_size=3&before_id=${childIds[10]}`);
    expect(before.body.children.map((c: any) => c.id)).toEqual(childIds.slice(0, 3));
    expect(before.body.has_more).toBe(true);
  });

  it.each(['0', '101', 'abc', '1.5', '-3'])('page_size=%s → 422', async (size) => {
    const res = await page(`?page_size=${size}`);
    expect(res.status).toBe(422);
    expect(errorOf(res).errors[0].field).toBe('page_size');
  });

  it('before_id with after_id → 422; ids of another type → 422', async () => {
    const both = await page(`?before_id=${childIds[5]}&after_id=${childIds[1]}`);
    expect(both.status).toBe(422);
    const wrong = await page('?after_id=hook_0123');
    expect(wrong.status).toBe(422);
    expect(errorOf(wrong).errors[0].field).toBe('after_id');
  });

  it('a valueless parameter counts as not given', async () => {
    const res = await page('?page_size&before_id=&after_id');
    expect(res.status).toBe(200);
    expect(res.body.children).toHaveLength(20);
  });

  it('start_datetime and end_datetime scope by creation time; bad values → DATE.PARSE.FAILURE', async () => {
    const future = await page(`?start_datetime=${new Date(Date.now() + 3_600_000).toISOString()}`);
    expect(future.body.children).toEqual([]);
    const past = await page(`?end_datetime=2000-01-01T00:00:00Z`);
    expect(past.body.children).toEqual([]);
    const window = await page(`?start_datetime=2000-01-01&end_datetime=${new Date(Date.now() + 60_000).toISOString()}&page_size=100`);
    expect(window.body.children).toHaveLength(25);
    for (const bad of ['yesterday', '2024-13-45T00:00:00Z', '1700000000']) {
      const res = await page(`?start_datetime=${bad}`);
      expect(res.status).toBe(422);
      expect(errorOf(res).code).toBe('DATE.PARSE.FAILURE');
    }
  });

  it('never shows another account’s children', async () => {
    const other = await createAccount(sys);
    const res = await call(sys, 'GET', '/users/children', { key: other.prodKey });
    expect(res.body).toEqual({ children: [], has_more: false });
  });
});
