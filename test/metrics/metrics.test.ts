import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStatus, publish, webhook } from '../support/events';
import { type Account, createAccount } from '../support/http';
import { type IsolatedSystem, isolatedSystem, type WorkerProcess } from '../support/isolated';
import { exportedNames, type Sample, scrape, total } from '../support/metrics';
import { eventually, type Receiver, startReceiver, status } from '../support/receiver';
import { TEST_ENV } from '../support/test-config';

const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };
const EVENTS = 4;
/** Attempts per URL with the test schedule (300ms, 600ms, 900ms): the failing URL gets all of them. */
const ATTEMPTS = 4;
const SECRET = 'obs-webhook-secret-7f3a';
const URL_PASSWORD = 'obs-url-password-91c2';

// A short burst with one failing receiver, on an isolated api and worker whose metrics
// only this file drives: the counters must move by exactly what the receivers saw.
describe('metrics after a burst with one failing receiver', () => {
  let iso: IsolatedSystem;
  let worker: WorkerProcess;
  let acct: Account;
  let good: Receiver;
  let bad: Receiver;
  let eventIds: string[];
  let workerBefore: Sample[];
  let workerAfter: Sample[];
  let apiBefore: Sample[];
  let apiAfter: Sample[];

  const workerMetrics = () => scrape(`http://127.0.0.1:${worker.httpPort}/metrics`);
  const apiMetrics = () => scrape(`${iso.api.origin}/metrics`, ADMIN);
  const delta = (name: string, labels: Record<string, string> = {}) => total(workerAfter, name, labels) - total(workerBefore, name, labels);

  beforeAll(async () => {
    iso = await isolatedSystem();
    // No disabling during the burst: every attempt of the failing URL is sent and counted.
    worker = (await iso.worker({ env: { SHIPHOOK_DISABLE_AFTER_FAILURES: '1000' } })) as WorkerProcess;
    good = await startReceiver(status(200));
    bad = await startReceiver(status(500));
    acct = await createAccount(iso.api);
    const goodUrl = good.url.replace('http://', `http://obs-user:${URL_PASSWORD}@`);
    await webhook(iso.api, acct.testKey, goodUrl, { webhook_secret: SECRET });
    await webhook(iso.api, acct.testKey, bad.url, { webhook_secret: SECRET });

    workerBefore = await workerMetrics();
    apiBefore = await apiMetrics();
    eventIds = [];
    for (let i = 0; i < EVENTS; i++) eventIds.push((await publish(iso.api, acct.user.id, 'test')).id);
    for (const id of eventIds) await eventStatus(iso.api, acct.testKey, id, 'failed', 30_000);
    await good.waitFor(EVENTS);
    await bad.waitFor(EVENTS * ATTEMPTS);
    // An event's status is final once its last outcome is recorded, inside the last activity:
    // wait until the SDK has counted that activity's end too.
    const retried = (samples: Sample[]) => total(samples, 'temporal_activity_execution_latency_seconds_count', { activity_type: 'retryDelivery' });
    workerAfter = await eventually(async () => {
      const now = await workerMetrics();
      return retried(now) - retried(workerBefore) >= EVENTS * (ATTEMPTS - 2) ? now : undefined;
    }, 60_000, 'the retry activities to end');
    apiAfter = await apiMetrics();
  }, 120_000);

  afterAll(async () => {
    await good?.close();
    await bad?.close();
    await iso?.close();
  });

  it('counts every attempt once, by outcome and attempt number, as the receivers saw them', () => {
    expect(good.deliveries).toHaveLength(EVENTS);
    expect(bad.deliveries).toHaveLength(EVENTS * ATTEMPTS);
    expect(good.deliveries[0]!.headers.authorization).toMatch(/^Basic /); // the URL's credentials were used
    expect(delta('shiphook_delivery_attempts_total', { outcome: '2xx' })).toBe(good.deliveries.length);
    expect(delta('shiphook_delivery_attempts_total', { outcome: '5xx' })).toBe(bad.deliveries.length);
    for (const attempt of ['1', '2', '3', '4+']) expect(delta('shiphook_delivery_attempts_total', { outcome: '5xx', attempt })).toBe(EVENTS);
    expect(delta('shiphook_delivery_attempts_total', { outcome: '2xx', attempt: '1' })).toBe(EVENTS);
    expect(delta('shiphook_delivery_attempts_total')).toBe(EVENTS * (ATTEMPTS + 1));
  });

  it('measures attempt latency, publish → first attempt and final statuses', () => {
    expect(delta('shiphook_delivery_attempt_duration_seconds_count')).toBe(EVENTS * (ATTEMPTS + 1));
    expect(delta('shiphook_delivery_attempt_duration_seconds_count', { outcome: '5xx' })).toBe(EVENTS * ATTEMPTS);
    expect(delta('shiphook_delivery_attempt_duration_seconds_sum')).toBeGreaterThan(0);
    expect(delta('shiphook_delivery_attempt_duration_seconds_bucket', { le: '+Inf' })).toBe(EVENTS * (ATTEMPTS + 1));
    // One first attempt per event and URL.
    expect(delta('shiphook_publish_to_first_attempt_seconds_count')).toBe(EVENTS * 2);
    expect(delta('shiphook_publish_to_first_attempt_seconds_sum')).toBeGreaterThan(0);
    expect(delta('shiphook_events_finished_total', { status: 'failed' })).toBe(EVENTS);
    expect(delta('shiphook_events_finished_total', { status: 'completed' })).toBe(0);
    expect(delta('shiphook_dispatcher_claimed_events_total')).toBe(EVENTS);
  });

  it('reports the engine state: outbox lag and depth, retries waiting, disabled webhooks', () => {
    const gauge = (name: string) => workerAfter.find((s) => s.name === name)?.value;
    expect(gauge('shiphook_outbox_lag_seconds')).toBe(0); // every event was dispatched
    expect(gauge('shiphook_outbox_depth')).toBe(0);
    expect(gauge('shiphook_events_retrying')).toBe(0); // all failed for good
    expect(gauge('shiphook_webhooks_disabled')).toBe(0);
  });

  it('serves the Temporal SDK worker metrics and the process metrics on the same endpoint', () => {
    expect(workerAfter.some((s) => s.name === 'temporal_worker_task_slots_available')).toBe(true);
    expect(delta('temporal_workflow_task_execution_latency_seconds_count')).toBeGreaterThanOrEqual(EVENTS);
    // Attempt 2 of the failing URL is made in attempt 1's task (its first retry is due within
    // seconds); attempts 3–4 are the activity retryDelivery, run by the server's retries.
    expect(delta('temporal_activity_execution_latency_seconds_count', { activity_type: 'retryDelivery' })).toBe(EVENTS * (ATTEMPTS - 2));
    expect(total(workerAfter, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(total(workerAfter, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('counts API requests by route template, method and status class', () => {
    const apiDelta = (labels: Record<string, string>) => total(apiAfter, 'shiphook_http_requests_total', labels) - total(apiBefore, 'shiphook_http_requests_total', labels);
    expect(apiDelta({ route: '/admin/v1/events', method: 'POST', status: '2xx' })).toBe(EVENTS);
    expect(apiDelta({ route: '/v2/events/:id', method: 'GET', status: '2xx' })).toBeGreaterThanOrEqual(EVENTS);
    // Never a path with an id in it.
    expect(apiAfter.filter((s) => s.name === 'shiphook_http_requests_total' && /evt_|hook_|user_/.test(s.labels.route ?? ''))).toEqual([]);
    expect(total(apiAfter, 'shiphook_http_request_duration_seconds_count', { route: '/admin/v1/events' }) - total(apiBefore, 'shiphook_http_request_duration_seconds_count', { route: '/admin/v1/events' })).toBe(EVENTS);
  });

  it("answers /metrics on the api only with the operator's token", async () => {
    const none = await fetch(`${iso.api.origin}/metrics`);
    expect(none.status).toBe(401);
    expect((await none.json()).error.code).toBe('UNAUTHORIZED');
    // A customer's API key is not the operator's token, as Bearer or as Basic.
    for (const authorization of [`Bearer ${acct.testKey}`, 'Basic ' + Buffer.from(`${acct.testKey}:`).toString('base64')]) {
      const res = await fetch(`${iso.api.origin}/metrics`, { headers: { authorization } });
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe('UNAUTHORIZED');
    }
  });

  it('logs every attempt with its event id and webhook id, as JSON lines only, with no secret', async () => {
    const read = () =>
      readFileSync(worker.logFile, 'utf8').split('\n').filter(Boolean).map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>;
        } catch {
          throw new Error(`not a JSON log line: ${l.slice(0, 200)}`);
        }
      });
    // The SDK logs an activity's end a moment after the metrics count it.
    const lines = await eventually(async () => {
      const all = read();
      return all.filter((l) => l.msg === 'Activity completed' && l.activityType === 'retryDelivery' && eventIds.includes(l.event_id as string)).length >= EVENTS ? all : undefined;
    }, 10_000, 'the last retries to be logged');
    const text = readFileSync(worker.logFile, 'utf8');
    const attempts = lines.filter((l) => l.msg === 'delivery attempt' && eventIds.includes(l.event_id as string));
    expect(attempts).toHaveLength(EVENTS * (ATTEMPTS + 1));
    for (const l of attempts) expect(l.webhook_id).toMatch(/^hook_/);
    // The Temporal SDK's own lines are in the same stream (the worker logs at debug in the suite);
    // its lines about a retry's outcome name the event and the webhook too, never a task token.
    expect(lines.some((l) => l.source === 'temporal')).toBe(true);
    const retries = lines.filter((l) => l.activityType === 'retryDelivery' && eventIds.includes(l.event_id as string));
    // Attempt 3 fails the activity (the server retries it); the 4th, the last, completes it.
    expect(retries.filter((l) => l.msg === 'Activity failed')).toHaveLength(EVENTS * (ATTEMPTS - 3));
    expect(retries.filter((l) => l.msg === 'Activity completed')).toHaveLength(EVENTS);
    for (const l of retries.filter((r) => r.msg !== 'Activity started')) expect(l.webhook_id).toMatch(/^hook_/);
    expect(lines.filter((l) => 'taskToken' in l)).toEqual([]);
    for (const secret of [SECRET, URL_PASSWORD, acct.testKey, acct.prodKey]) expect(text).not.toContain(secret);
  });

  it('counts a webhook disabled by a 410 and shows it in the disabled gauge', async () => {
    const gone = await startReceiver(status(410));
    try {
      await webhook(iso.api, acct.testKey, gone.url);
      const before = await workerMetrics();
      await publish(iso.api, acct.user.id, 'test');
      await gone.waitFor(1);
      // The gauge is read from the database, which says `disabled` a moment before the
      // worker counts the action: wait for both.
      const counted = (now: typeof before) => total(now, 'shiphook_webhook_disable_actions_total', { reason: 'gone' }) > total(before, 'shiphook_webhook_disable_actions_total', { reason: 'gone' });
      const after = await eventually(async () => {
        const now = await workerMetrics();
        return now.find((s) => s.name === 'shiphook_webhooks_disabled')?.value === 1 && counted(now) ? now : undefined;
      }, 20_000, 'the 410 webhook to be disabled and counted');
      const moved = (name: string, labels: Record<string, string>) => total(after, name, labels) - total(before, name, labels);
      expect(moved('shiphook_webhook_disable_actions_total', { reason: 'gone' })).toBe(1);
      expect(moved('shiphook_webhook_disable_actions_total', { reason: 'failing' })).toBe(0);
      expect(moved('shiphook_delivery_attempts_total', { outcome: '4xx', attempt: '1' })).toBe(1);
    } finally {
      await gone.close();
    }
  });

  it('exports every metric the Grafana dashboard queries', () => {
    const dashboard = readFileSync(path.resolve('deploy/grafana/dashboards/shiphook.json'), 'utf8');
    const exprs = [...dashboard.matchAll(/"expr":\s*"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
    expect(exprs.length).toBeGreaterThan(10);
    const queried = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:shiphook|temporal|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!)));
    const exported = new Set([...exportedNames(workerAfter), ...exportedNames(apiAfter)]);
    expect([...queried].filter((name) => !exported.has(name))).toEqual([]);
    // The metrics are all on the dashboard.
    for (const name of ['shiphook_http_requests_total', 'shiphook_delivery_attempts_total', 'shiphook_delivery_attempt_duration_seconds_bucket', 'shiphook_publish_to_first_attempt_seconds_bucket', 'shiphook_outbox_lag_seconds', 'shiphook_outbox_depth', 'shiphook_events_retrying', 'shiphook_webhooks_disabled', 'shiphook_events_finished_total', 'shiphook_dispatcher_claimed_events_total']) {
      expect(queried.has(name)).toBe(true);
    }
  });
});
