import { checkResponse } from './contract';
import type { TestSystem } from './system';
import { TEST_ENV } from './test-config';

export interface Res<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * A request to the API as a client sends it: Basic auth with the key as user name.
 * Every answer is checked against the OpenAPI document (contract.ts).
 */
export async function call<T = any>(
  sys: TestSystem,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Res<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = 'Basic ' + Buffer.from(`${opts.key}:`).toString('base64');
  let body: string | undefined;
  if (opts.body !== undefined || opts.rawBody !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = opts.rawBody ?? JSON.stringify(opts.body);
  }
  const url = path.startsWith('/admin/') ? sys.origin + path : sys.baseUrl + path;
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`non-JSON answer ${res.status} to ${method} ${path}: ${text.slice(0, 200)}`);
    }
  }
  checkResponse(method, new URL(url).pathname, res.status, parsed);
  return { status: res.status, body: parsed as T, headers: res.headers };
}

export interface Account {
  user: any;
  testKey: string;
  prodKey: string;
}

let counter = 0;

/** A fresh parent account through the operator API (every test works in its own account). */
export async function createAccount(
  sys: TestSystem,
  opts: { referral_customer?: boolean; end_shipper_enabled?: boolean; password?: string; balance?: string } = {},
): Promise<Account> {
  const email = `user${Date.now()}${process.pid}${++counter}@example.com`;
  const res = await call(sys, 'POST', '/admin/v1/users', {
    headers: { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` },
    body: { name: 'Test User', email, ...opts },
  });
  if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  const keys = res.body.api_keys as { mode: string; key: string }[];
  return {
    user: res.body.user,
    testKey: keys.find((k) => k.mode === 'test')!.key,
    prodKey: keys.find((k) => k.mode === 'production')!.key,
  };
}

/** Asserts the seed's error body and returns it. */
export function errorOf(res: Res): { code: string; message: string; errors: any[] } {
  if (!res.body?.error) throw new Error(`expected an error body, got ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.error;
}
