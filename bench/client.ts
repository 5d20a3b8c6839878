import { Agent, request } from 'undici';
import { ADMIN_TOKEN } from './system';

/** The benchmark's own HTTP client to the API (keep-alive, bounded concurrency). */
const agent = new Agent({ connections: 64, keepAliveTimeout: 30_000 });

export async function api(origin: string, method: string, path: string, opts: { key?: string; admin?: boolean; body?: unknown } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.key) headers.authorization = `Basic ${Buffer.from(`${opts.key}:`).toString('base64')}`;
  if (opts.admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  const res = await request(origin + path, { method: method as 'GET', headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body), dispatcher: agent });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

export async function account(origin: string, name: string) {
  const res = await api(origin, 'POST', '/admin/v1/users', { admin: true, body: { name, email: `${name}-${Date.now()}-${Math.random()}@bench.local` } });
  if (res.status !== 201) throw new Error(`account: ${res.status} ${JSON.stringify(res.body)}`);
  return { userId: res.body.user.id as string, testKey: res.body.api_keys[0].key as string };
}

/** `settings`: the webhook's `rate_limit` and `ordering` (bench/run.ts: --rate-limit, --ordering). */
export type WebhookSettings = { rate_limit?: number; ordering?: 'per_object' };

export async function addWebhook(origin: string, key: string, url: string, eventTypes: string[] | null = null, settings: WebhookSettings = {}) {
  const res = await api(origin, 'POST', '/v2/webhooks', { key, body: { webhook: { url, webhook_secret: 'bench-secret', ...(eventTypes ? { event_types: eventTypes } : {}), ...settings } } });
  if (res.status !== 201) throw new Error(`webhook: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const EVENT_RESULT = { object: 'Tracker', id: 'trk_bench', status: 'in_transit', weight: 15, tracking_code: 'SIMT000', shipment_id: 'shp_bench' };
/** `objectId`: the tracker it is about (`result.id`; an ordered webhook delivers one object's events one after another). */
export const newEvent = (userId: string, objectId = EVENT_RESULT.id) => ({ user_id: userId, mode: 'test', description: 'tracker.updated', result: { ...EVENT_RESULT, id: objectId }, previous_attributes: { status: 'pre_transit' } });

export async function publish(origin: string, userId: string, objectId?: string) {
  const res = await api(origin, 'POST', '/admin/v1/events', { admin: true, body: newEvent(userId, objectId) });
  if (res.status !== 201) throw new Error(`publish: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

/**
 * Operator replay of every event of a user in a status; returns how many matched.
 * Each call answers at once (202, the workers start the events) and marks at most
 * 10,000: the matched leave the status, so the next call takes the rest.
 */
export async function replayAll(origin: string, userId: string, status: string): Promise<number> {
  let total = 0;
  for (;;) {
    const res = await api(origin, 'POST', '/admin/v1/events/replay', { admin: true, body: { user_id: userId, status } });
    if (res.status !== 202) throw new Error(`replay: ${res.status} ${JSON.stringify(res.body)}`);
    total += res.body.matched;
    if (!res.body.capped) return total;
  }
}

/** Runs `fn` for 0..n-1 with at most `concurrency` at a time. */
export async function pool(n: number, concurrency: number, fn: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, async () => {
    while (next < n) await fn(next++);
  }));
}

export async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** Reads each event back through GET /v2/events/:id and tallies status and URL states. */
export async function verifyEvents(origin: string, key: string, ids: string[], urlsPerEvent: number) {
  const statuses: Record<string, number> = {};
  let fullyCompleted = 0;
  let unreadable = 0;
  await pool(ids.length, 16, async (i) => {
    const res = await api(origin, 'GET', `/v2/events/${ids[i]}`, { key });
    if (res.status !== 200) { unreadable++; return; }
    statuses[res.body.status] = (statuses[res.body.status] ?? 0) + 1;
    if (res.body.pending_urls.length === 0 && res.body.completed_urls.length === urlsPerEvent) fullyCompleted++;
  });
  return { statuses, events_with_every_url_completed: fullyCompleted, unreadable };
}
