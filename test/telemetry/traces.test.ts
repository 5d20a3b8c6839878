import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TRACE_HEADER as TEMPORAL_TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { TRACE_HEADER } from '../../workflows/trace-context';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../../src/launcher/otlp-receiver';
import { eventStatus, publish, webhook } from '../support/events';
import { type Account, call, createAccount } from '../support/http';
import { type IsolatedSystem, isolatedSystem, type ShiphookProcess } from '../support/isolated';
import { spanFile } from '../support/log-capture';
import { eventually, type Receiver, startReceiver, status } from '../support/receiver';
import type { TestSystem } from '../support/system';
import { otlpEnv } from '../support/test-config';

// A real `shiphook api` and `shiphook worker`, each exporting OTLP/JSON to a receiver in
// this process, as an operator runs them with the standard OTEL_* variables.
let otlp: OtlpReceiver;
let dump: string;
let iso: IsolatedSystem;
let api: ShiphookProcess & { sys: TestSystem };
let hooks: Receiver;
let acct: Account;
let hook: { id: string };
const unique = `${process.pid}${Date.now()}`;
const secrets = { password: `hookpass${unique}`, token: `querytoken${unique}`, header: `headervalue${unique}`, signing: `signingsecret${unique}` };

beforeAll(async () => {
  // What arrives also goes to the suite's span folder, scanned for secrets at the end.
  dump = spanFile(inject('logDir'), `traces-${process.pid}`);
  otlp = await startOtlpReceiver({ dumpTo: dump });
  iso = await isolatedSystem();
  // Failures never disable the webhook here: the recovery below needs it enabled.
  await iso.workerProcess({ env: { ...otlpEnv(otlp.url), SHIPHOOK_DISABLE_AFTER_FAILURES: '100' } });
  api = await iso.apiProcess({ env: otlpEnv(otlp.url) });
  // Traffic only once the api is ready, as an orchestrator's readiness probe gates it: /readyz
  // also connects the api's Temporal client (made on first use). Otherwise the replay below would
  // pay for that connection, and on a loaded machine it can outlast the start's bound: the
  // replay is then started by a dispatcher (replay.ts), in a trace of its own.
  await eventually(async () => ((await fetch(`${api.sys.origin}/readyz`)).ok ? true : undefined), 60_000, 'the api ready');
  hooks = await startReceiver();
  acct = await createAccount(api.sys);
  const url = new URL(hooks.url);
  url.username = 'hookuser';
  url.password = secrets.password;
  url.search = `?token=${secrets.token}`;
  hook = await webhook(api.sys, acct.testKey, url.toString(), { webhook_secret: secrets.signing, custom_headers: [{ name: 'X-Tenant', value: secrets.header }] });
}, 120_000);

afterAll(async () => {
  await hooks?.close();
  await iso?.close(); // the processes send their last spans as they stop
  await otlp?.close();
});

/** The spans of the trace that the span `anchor` finds is in, once it holds spans of every name in `names`. */
async function traceWith(what: string, anchor: (s: ReceivedSpan) => boolean, names: string[]): Promise<ReceivedSpan[]> {
  return eventually(async () => {
    const all = otlp.spans();
    const found = all.find(anchor);
    const trace = found ? all.filter((s) => s.traceId === found.traceId) : [];
    return names.every((n) => trace.some((s) => s.name === n)) ? trace : undefined;
  }, 30_000, what);
}

/** The one span of `trace` named `name` (matching `where`). */
function one(trace: ReceivedSpan[], name: string, where: (s: ReceivedSpan) => boolean = () => true): ReceivedSpan {
  const found = trace.filter((s) => s.name === name && where(s));
  expect(found.map((s) => s.name), name).toEqual([name]);
  return found[0]!;
}

const ofEvent = (id: string) => (s: ReceivedSpan) => s.attributes['shiphook.event.id'] === id;
const ERROR = 2; // OTLP's STATUS_CODE_ERROR

describe('traces (OpenTelemetry)', () => {
  it("one event's spans form one trace across the api and worker processes: request, publish, dispatch, workflow, attempt", async () => {
    const event = await publish(api.sys, acct.user.id, 'test');
    await eventStatus(api.sys, acct.testKey, event.id, 'completed');
    const names = ['POST /admin/v1/events', 'publish events', 'dispatch event', 'StartWorkflow:deliverEvent', 'RunActivity:attemptDeliveries', 'POST webhook'];
    const trace = await traceWith(`the trace of ${event.id}`, (s) => s.name === 'POST webhook' && ofEvent(event.id)(s), names);

    // Connected: one root, the API request; every other span's parent is in the trace.
    const ids = new Set(trace.map((s) => s.spanId));
    expect(trace.filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId)).map((s) => s.name)).toEqual(['POST /admin/v1/events']);
    // Each step is the child of the one before, the first two in the api, the rest in the worker.
    const chain = names.map((n) => one(trace, n));
    chain.slice(1).forEach((span, i) => expect(span.parentSpanId, `${span.name} under ${chain[i]!.name}`).toBe(chain[i]!.spanId));
    expect(chain.map((s) => s.service)).toEqual([...Array(2).fill('shiphook-api'), ...Array(4).fill('shiphook-worker')]);

    const [request, published, dispatch, start, attempts] = chain;
    expect(request!.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/admin/v1/events', 'http.response.status_code': 201 });
    expect(published!.attributes).toMatchObject({ 'shiphook.event.id': event.id, 'shiphook.event.count': 1, 'shiphook.event.type': 'tracker.updated' });
    expect(dispatch!.attributes).toMatchObject({ 'shiphook.event.id': event.id, 'shiphook.event.type': 'tracker.updated', 'shiphook.user.id': acct.user.id, 'shiphook.mode': 'test', 'shiphook.deliveries': 1, 'shiphook.replay': false });
    // The workflow (id = event id), and attempt 1: its activity, which the workflow's start handed the trace to.
    expect(start!.attributes).toMatchObject({ temporalWorkflowId: event.id });
    expect(attempts!.attributes).toMatchObject({ temporalWorkflowId: event.id, run_id: start!.attributes.run_id });
    const post = chain.at(-1)!;
    const [delivered] = hooks.deliveries.filter((d) => d.json?.id === event.id);
    const { port } = new URL(hooks.url);
    expect(post.attributes).toEqual({
      'http.request.method': 'POST',
      // Masked: the URL's user-info and its query (a token) never reach a span.
      'url.full': `http://***@127.0.0.1:${port}/hook?***`,
      'http.response.status_code': 200,
      'shiphook.event.id': event.id,
      'shiphook.webhook.id': hook.id,
      'shiphook.attempt': 1,
      'shiphook.payload.id': delivered!.headers['x-shiphook-delivery-id'],
      'shiphook.total_time_ms': expect.any(Number),
    });
    expect(post.endNs).toBeGreaterThan(post.startNs);
    expect(post.status.code).not.toBe(ERROR);
  });

  it("retries continue the event's trace; a recovery and a replay are traces of their own that link to it", async () => {
    hooks.answer(status(500));
    const since = new Date(Date.now() - 1000).toISOString();
    const event = await publish(api.sys, acct.user.id, 'test');
    await eventStatus(api.sys, acct.testKey, event.id, 'failed', 30_000);
    // Attempt 1 in the first workflow task, 2–4 in the retry activity: all in the publish's trace, each failed.
    const trace = await traceWith(`the attempts of ${event.id}`, (s) => s.name === 'POST webhook' && s.attributes['shiphook.attempt'] === 4 && ofEvent(event.id)(s), ['publish events', 'RunActivity:retryDelivery']);
    const attempts = trace.filter((s) => s.name === 'POST webhook').sort((a, b) => Number(a.attributes['shiphook.attempt']) - Number(b.attributes['shiphook.attempt']));
    expect(attempts.map((s) => [s.attributes['shiphook.attempt'], s.attributes['http.response.status_code'], s.status.code])).toEqual([1, 2, 3, 4].map((n) => [n, 500, ERROR]));
    const published = one(trace, 'publish events');

    // A recovery, carried out by a worker's dispatcher: a trace of its own, linked to the event's.
    hooks.answer(status(200));
    const recovery = await call(api.sys, 'POST', `/webhooks/${hook.id}/recover`, { key: acct.testKey, body: { since } });
    expect(recovery.status).toBe(202);
    await eventStatus(api.sys, acct.testKey, event.id, 'completed', 30_000);
    const recovered = await traceWith(`the recovery of ${event.id}`, (s) => s.name === 'dispatch event' && ofEvent(event.id)(s) && s.traceId !== published.traceId, ['dispatch event', 'StartWorkflow:deliverEvent', 'POST webhook']);
    const redispatch = one(recovered, 'dispatch event');
    expect(redispatch.parentSpanId).toBeUndefined();
    expect(redispatch.attributes).toMatchObject({ 'shiphook.replay': true, 'shiphook.replay.id': recovery.body.id });
    expect(redispatch.links).toEqual([{ traceId: published.traceId, spanId: published.spanId, attributes: { 'shiphook.link': 'published' } }]);
    expect(one(recovered, 'POST webhook').attributes).toMatchObject({ 'shiphook.attempt': 1, 'http.response.status_code': 200 });

    // A replay, started by the request that asks for it: in that request's trace, linked to the event's.
    const replay = await call(api.sys, 'POST', `/events/${event.id}/replay`, { key: acct.testKey, body: { all: true } });
    expect(replay.status).toBe(200);
    const replayed = await traceWith(`the replay of ${event.id}`, (s) => s.name === 'POST /v2/events/:id/replay', ['dispatch event', 'StartWorkflow:deliverEvent', 'POST webhook']);
    const request = one(replayed, 'POST /v2/events/:id/replay');
    const started = one(replayed, 'dispatch event');
    expect(started.parentSpanId).toBe(request.spanId);
    expect(started.links).toEqual([{ traceId: published.traceId, spanId: published.spanId, attributes: { 'shiphook.link': 'published' } }]);
  });

  it("a delivery's workflow hands on the header Temporal's interceptors carry the trace in", () => {
    expect(TRACE_HEADER).toBe(TEMPORAL_TRACE_HEADER);
  });

  it('no span carries a secret: API keys, the webhook secret, URL credentials and query, custom header values', async () => {
    // What the tests above made, as it arrived (the suite's teardown scans every span the same way).
    await eventually(async () => (otlp.spans().length > 0 ? true : undefined));
    const received = readFileSync(dump, 'utf8');
    for (const [what, value] of Object.entries({ ...secrets, testKey: acct.testKey, prodKey: acct.prodKey })) expect(received.includes(value), what).toBe(false);
  });
});
