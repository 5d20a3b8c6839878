import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_RESULTS } from '../../src/events/catalogue/results';
import { checkDelivery } from '../support/contract';
import { eventStatus, publish, webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { eventually, type Receiver, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';
import { type Running, shiphook, startShiphook } from './shiphook-cli';

/** `shiphook trigger` and `shiphook events resend`, run as a developer runs them against the suite's API. */
let sys: TestSystem;
let receiver: Receiver;
const running: Running[] = [];

beforeAll(async () => {
  sys = await startSystem();
  receiver = await startReceiver(status(200));
});
afterAll(async () => {
  for (const r of running) r.child.kill('SIGKILL');
  await Promise.all([receiver.close(), sys.close()]);
});

const run = (args: string[], key: string) => shiphook([...args, '--url', sys.origin], { env: { SHIPHOOK_API_KEY: key } });
const deliveriesTo = (path: string) => receiver.deliveries.filter((d) => d.url.endsWith(path));

// Each test runs the CLI (a Node process loading TypeScript) once or more: slow on a busy machine.
describe('shiphook trigger', { timeout: 180_000 }, () => {
  it('publishes a test event of the type from the catalogue, prints its id, and every subscriber gets it, a listener included', async () => {
    const acct = await createAccount(sys);
    const path = `/trigger-${Date.now()}`;
    await webhook(sys, acct.testKey, `${receiver.url}${path}`, { event_types: ['tracker.*'] });
    await webhook(sys, acct.testKey, `${receiver.url}${path}-batches`, { event_types: ['batch.*'] });
    const listening = startShiphook(['listen', '--forward-to', `${receiver.url}${path}-listener`, '--url', sys.origin], { env: { SHIPHOOK_API_KEY: acct.testKey } });
    running.push(listening);
    await listening.line(/^Ready! /);

    const { code, stdout, stderr } = await run(['trigger', 'tracker.updated'], acct.testKey);
    expect(code, stderr).toBe(0);
    const id = stdout.trim();
    expect(id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(stderr).toMatch(/^Triggered tracker\.updated: evt_\w+, on its way to 2 receivers: /);

    await eventStatus(sys, acct.testKey, id, 'completed');
    const [delivered] = deliveriesTo(path);
    expect(delivered!.json).toMatchObject({ id, mode: 'test', description: 'tracker.updated', result: { object: 'Tracker', mode: 'test' } });
    expect(delivered!.json.result.tracking_code).toBe(EVENT_RESULTS['tracker.updated'].example.result.tracking_code);
    checkDelivery(delivered!.json);
    expect(deliveriesTo(`${path}-batches`)).toEqual([]);
    await listening.line(new RegExp(`  tracker\\.updated  ${id}  \\[200\\]`));
  });

  it('refuses a production key, an unknown type, and says where the types are', async () => {
    const acct = await createAccount(sys);
    const [production, unknown, help] = await Promise.all([
      run(['trigger', 'tracker.updated'], acct.prodKey),
      run(['trigger', 'tracker.moved'], acct.testKey),
      shiphook(['trigger', '--help']),
    ]);
    expect(production.code).toBe(1);
    expect(production.stderr).toContain('it takes a test API key, not a production one');
    expect(production.stderr).toContain('[MODE.CONFLICT]');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/tracker\.moved is not an event type; one of: batch\.created, .*tracker\.updated/);
    expect(help.code).toBe(0);
    expect(help.stdout.match(/^ {2}[a-z_]+(\.[a-z_]+)+$/gm)).toHaveLength(23);
    // The API's own answer to a production key (the CLI aside).
    const res = await call(sys, 'POST', '/events/trigger', { key: acct.prodKey, body: { description: 'tracker.updated' } });
    expect(res.status).toBe(403);
  });
});

describe('shiphook events resend', { timeout: 180_000 }, () => {
  it('delivers an event again, also one delivered already, to every subscriber or to the one named', async () => {
    const acct = await createAccount(sys);
    const path = `/resend-${Date.now()}`;
    const a = await webhook(sys, acct.testKey, `${receiver.url}${path}-a`);
    await webhook(sys, acct.testKey, `${receiver.url}${path}-b`);
    const evt = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, evt.id, 'completed');
    expect(deliveriesTo(`${path}-a`)).toHaveLength(1);

    const again = await run(['events', 'resend', evt.id], acct.testKey);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(evt.id);
    await eventually(async () => (deliveriesTo(`${path}-a`).length === 2 && deliveriesTo(`${path}-b`).length === 2 ? true : undefined), 20_000, 'both again');

    const one = await run(['events', 'resend', evt.id, '--webhook', a.id], acct.testKey);
    expect(one.code, one.stderr).toBe(0);
    await eventually(async () => (deliveriesTo(`${path}-a`).length === 3 ? true : undefined), 20_000, 'webhook a a third time');
    await eventStatus(sys, acct.testKey, evt.id, 'completed');
    expect(deliveriesTo(`${path}-b`)).toHaveLength(2);
    expect(new Set([...deliveriesTo(`${path}-a`), ...deliveriesTo(`${path}-b`)].map((d) => d.headers['webhook-id']))).toEqual(new Set([evt.id]));
  });

  it('says what is wrong: an unknown event, a webhook of nobody', async () => {
    const acct = await createAccount(sys);
    const evt = await publish(sys, acct.user.id, 'test');
    const [unknown, noHook] = await Promise.all([
      run(['events', 'resend', 'evt_00000000000000000000000000000000'], acct.testKey),
      run(['events', 'resend', evt.id, '--webhook', 'hook_00000000000000000000000000000000'], acct.testKey),
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('[NOT_FOUND]');
    expect(noHook.code).toBe(1);
    expect(noHook.stderr).toMatch(/hook_0+ is not an enabled webhook or listener of this account and mode.*\[WEBHOOK\.INVALID\]/);
  });
});
