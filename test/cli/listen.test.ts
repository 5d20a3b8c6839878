import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacSignature } from '../../src/engine/signed-request';
import { publishEvent } from '../../src/events/publish';
import { eventStatus, publish } from '../support/events';
import { type Account, call, createAccount } from '../support/http';
import { eventually, type Receiver, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';
import { freshDataDir, type Running, shiphook, startShiphook } from './shiphook-cli';

/**
 * `shiphook listen` run as a developer runs it (a process of its own, against the suite's
 * API, with nothing but the API's URL and a key), forwarding to a receiver on this machine.
 */
const GRACE_MS = 3000;

let sys: TestSystem;
let local: Receiver;
const running: Running[] = [];

beforeAll(async () => {
  sys = await startSystem({ listeners: { graceMs: GRACE_MS, heartbeatMs: 500, maxRetryDelayMs: 1000 } });
  local = await startReceiver(status(200));
});
afterAll(async () => {
  for (const r of running) r.child.kill('SIGKILL');
  await Promise.all([local.close(), sys.close()]);
});

function listen(acct: Account, forwardTo: string, extra: string[] = [], key = acct.testKey): Running {
  const r = startShiphook(['listen', '--forward-to', forwardTo, '--url', sys.origin, ...extra], { env: { SHIPHOOK_API_KEY: key } });
  running.push(r);
  return r;
}

async function ready(r: Running): Promise<{ listenerId: string; secret: string }> {
  const [, listenerId] = await r.line(/^Ready! .*\(listener (lst_\w+) at /);
  const [, secret] = await r.line(/^Your webhook signing secret is (\S+) /);
  return { listenerId: listenerId!, secret: secret! };
}

const listenersOf = async (acct: Account) => (await call(sys, 'GET', '/listeners', { key: acct.testKey })).body.listeners as { id: string }[];

// Each test runs the CLI (a Node process loading TypeScript) once or more: slow on a busy machine.
describe('shiphook listen', { timeout: 180_000 }, () => {
  it('forwards the events of its key to localhost, signed with the secret given (and printed), one line each, and the answer is the attempt', async () => {
    const acct = await createAccount(sys);
    const path = `/listen-${Date.now()}`;
    const given = `whsec_${Buffer.from(`listen-test-${Date.now()}`.padEnd(32, '.')).toString('base64')}`;
    const r = listen(acct, `${local.url}${path}`, ['--events', 'tracker.*', '--secret', given]);
    const { listenerId, secret } = await ready(r);
    expect(secret).toBe(given); // --secret: the receiver's own secret instead of the kept one

    const evt = await publish(sys, acct.user.id, 'test', { description: 'tracker.updated' });
    await publish(sys, acct.user.id, 'test', { description: 'batch.created', result: { object: 'Batch', id: 'batch_1' } }); // not in --events
    const [line] = await r.line(new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  tracker\\.updated  ${evt.id}  \\[200\\] \\d+ ms$`));
    expect(line).toBeDefined();

    const got = local.deliveries.filter((d) => d.url.endsWith(path));
    expect(got).toHaveLength(1);
    const { headers, body } = got[0]!;
    // As a webhook gets it: the Event with its result, both signatures, the brand headers.
    expect(() => new StandardWebhook(secret).verify(body.toString('utf8'), headers as Record<string, string>)).not.toThrow();
    expect(headers['x-hmac-signature']).toBe(hmacSignature(body.toString('utf8'), secret));
    expect(headers['x-shiphook-event-type']).toBe('tracker.updated');
    expect(headers['x-shiphook-attempt']).toBe('1');
    expect(got[0]!.json).toMatchObject({ id: evt.id, mode: 'test', pending_urls: [`listen://${listenerId}`] });

    // Recorded like any delivery: the attempt is a Payload of the listener, with the local answer.
    await eventStatus(sys, acct.testKey, evt.id, 'completed');
    const payloads = (await call(sys, 'GET', `/events/${evt.id}/payloads`, { key: acct.testKey })).body.payloads;
    expect(payloads).toHaveLength(1);
    expect(payloads[0]).toMatchObject({ id: headers['x-shiphook-delivery-id'], request_url: `listen://${listenerId}`, response_code: 200, response_body: 'ok' });
    expect(r.lines.join('\n')).not.toContain('batch.created');
  });

  it('records a failing local endpoint as failed attempts and forwards the retries', async () => {
    const acct = await createAccount(sys);
    const failing = await startReceiver(status(500));
    try {
      const r = listen(acct, failing.url);
      await ready(r);
      const evt = await publish(sys, acct.user.id, 'test');
      await r.line(new RegExp(`  ${evt.id}  \\[500\\] \\d+ ms  \\(attempt 2\\)$`));
      const payloads = (await call(sys, 'GET', `/events/${evt.id}/payloads`, { key: acct.testKey })).body.payloads;
      expect(payloads.map((p: { response_code: number }) => p.response_code)).toContain(500);
      // A listener is never disabled for its failures: it lives as long as its terminal.
      expect((await listenersOf(acct)).length).toBe(1);
    } finally {
      await failing.close();
    }
  });

  it('reconnects after the connection drops and gets what was queued meanwhile', async () => {
    const acct = await createAccount(sys);
    const path = `/reconnect-${Date.now()}`;
    const r = listen(acct, `${local.url}${path}`);
    const { listenerId } = await ready(r);

    // The API goes away (every connection with it); an event is published meanwhile.
    const { port } = sys.server.address() as AddressInfo;
    sys.server.closeAllConnections();
    await new Promise((resolve) => sys.server.close(resolve));
    await r.line(/^Lost the connection to /);
    const evt = await publishEvent(sys.db, { userId: acct.user.id, mode: 'test', description: 'tracker.created', result: { object: 'Tracker', id: 'trk_reconnect' } });
    // Its attempt waits in the listener's queue.
    await eventually(async () => (await sys.db.selectFrom('listener_requests').select('id').where('listener_id', '=', listenerId).executeTakeFirst()) ?? undefined, 10_000, 'a queued request');

    sys.server.listen(port, '127.0.0.1');
    await once(sys.server, 'listening');
    await r.line(/^Reconnected\.$/);
    await r.line(new RegExp(`  tracker\\.created  ${evt.id}  \\[200\\]`));
    expect(local.deliveries.filter((d) => d.url.endsWith(path)).map((d) => d.json.id)).toContain(evt.id);
    await eventStatus(sys, acct.testKey, evt.id, 'completed');
  });

  it('says Ready! once its stream is open, not when its listener is made', async () => {
    const acct = await createAccount(sys);
    // Between the CLI and the API: the first stream request is answered 503 (as an API
    // restarting behind a load balancer answers), the rest pass through.
    let refused = 0;
    const proxy = createServer((req, res) => {
      if (refused === 0 && req.url?.endsWith('/stream')) {
        refused++;
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: 'Restarting.' } }));
        return;
      }
      const upstream = httpRequest(new URL(req.url!, sys.origin), { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode!, up.headers);
        up.pipe(res);
      });
      req.pipe(upstream);
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    try {
      const r = startShiphook(['listen', '--forward-to', local.url, '--url', `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`], { env: { SHIPHOOK_API_KEY: acct.testKey } });
      running.push(r);
      const { listenerId } = await ready(r);
      // Made, then the stream refused and tried again; only its opening says Ready!, once.
      expect(refused).toBe(1);
      const lost = r.lines.findIndex((l) => l.startsWith('Lost the connection to '));
      expect(lost).toBeGreaterThanOrEqual(0);
      expect(r.lines.findIndex((l) => l.startsWith('Ready! '))).toBeGreaterThan(lost);
      expect(r.lines.filter((l) => l.startsWith('Ready! '))).toHaveLength(1);
      expect(r.lines).not.toContain('Reconnected.');
      const evt = await publish(sys, acct.user.id, 'test');
      await r.line(new RegExp(`  ${evt.id}  \\[200\\]`));
      expect((await listenersOf(acct)).map((l) => l.id)).toEqual([listenerId]);
      r.child.kill('SIGINT');
      expect(await r.exited()).toBe(0);
    } finally {
      proxy.closeAllConnections();
      proxy.close();
    }
  });

  it('removes its listener at once on Ctrl-C', async () => {
    const acct = await createAccount(sys);
    const r = listen(acct, local.url);
    const { listenerId } = await ready(r);
    expect((await listenersOf(acct)).map((l) => l.id)).toEqual([listenerId]);
    r.child.kill('SIGINT');
    expect(await r.exited()).toBe(0);
    expect(r.lines).toContain(`Stopped: listener ${listenerId} removed.`);
    expect(await listenersOf(acct)).toEqual([]);
    const row = await sys.db.selectFrom('webhooks').select('deleted_at').where('id', '=', listenerId).executeTakeFirstOrThrow();
    expect(row.deleted_at).not.toBeNull();
  });

  it('leaves a vanished client\'s listener for the grace period, then removes it', async () => {
    const acct = await createAccount(sys);
    const r = listen(acct, local.url);
    await ready(r);
    const killedAt = Date.now();
    r.child.kill('SIGKILL');
    await r.exited();
    // Not at once (the grace period runs from the dropped connection), but then.
    await eventually(async () => ((await listenersOf(acct)).length === 0 ? true : undefined), GRACE_MS + 30_000, 'the abandoned listener to go');
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(GRACE_MS);
  });

  it('stops when the key it listens with is disabled, and says why', async () => {
    const acct = await createAccount(sys, { referral_customer: true });
    const r = listen(acct, local.url);
    const { listenerId } = await ready(r);
    const keys = (await call(sys, 'GET', '/api_keys', { key: acct.prodKey })).body.keys as { id: string; key: string }[];
    const testKeyId = keys.find((k) => k.key === acct.testKey)!.id;
    expect((await call(sys, 'POST', `/api_keys/${testKeyId}/disable`, { key: acct.prodKey })).status).toBe(200);
    // At its next heartbeat the stream ends with the reason, and the CLI exits with it.
    expect(await r.exited()).toBe(1);
    expect(r.stderr()).toContain(`listener ${listenerId}: The API key this stream was opened with was disabled or deleted.`);
    // No event reaches it meanwhile: the stream is closed, and its listener goes at the end of its grace period.
    const row = await sys.db.selectFrom('listeners').select('id').where('id', '=', listenerId).executeTakeFirst();
    expect(row?.id).toBe(listenerId);
  });

  it('says what is wrong: no server, a wrong key, a production key without --live, bad options', async () => {
    const acct = await createAccount(sys);
    const run = (args: string[], key = acct.testKey) => shiphook(['listen', ...args], { env: { SHIPHOOK_API_KEY: key } });

    const [unreachable, wrongKey, production, badEvents, noTarget, help] = await Promise.all([
      run(['--forward-to', local.url, '--url', 'http://127.0.0.1:9']),
      run(['--forward-to', local.url, '--url', sys.origin], 'shk_test_000000000000000000000000000000000000000000000000'),
      run(['--forward-to', local.url, '--url', sys.origin], acct.prodKey),
      run(['--forward-to', local.url, '--url', sys.origin, '--events', 'Tracker.updated']),
      run(['--url', sys.origin]),
      shiphook(['listen', '--help'], { dataDir: freshDataDir() }),
    ]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/cannot reach shiphook at http:\/\/127\.0\.0\.1:9 \(connection refused\): is `npm start` running\?/);

    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain('the server refused the API key from SHIPHOOK_API_KEY');

    expect(production.code).toBe(1);
    expect(production.stderr).toMatch(/production API key.*--live.*\[MODE\.CONFLICT\]/);
    expect(await call(sys, 'GET', '/listeners', { key: acct.prodKey }).then((res) => res.body.listeners)).toEqual([]);

    expect(badEvents.code).toBe(1);
    expect(badEvents.stderr).toContain('event types are lower case: tracker.updated');

    expect(noTarget.stderr).toContain('--forward-to is required');

    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: shiphook listen --forward-to URL/);
  });

  it('forwards live events only with --live and a production key', async () => {
    const acct = await createAccount(sys);
    const path = `/live-${Date.now()}`;
    const r = listen(acct, `${local.url}${path}`, ['--live'], acct.prodKey);
    await r.line(/^Ready! Forwarding production events /);
    const evt = await publish(sys, acct.user.id, 'production');
    await r.line(new RegExp(`  ${evt.id}  \\[200\\]`));
    r.child.kill('SIGINT');
    expect(await r.exited()).toBe(0);
  });
});
