import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStatusAttr } from '../../src/engine/contract';
import { lazyTemporal } from '../../src/engine/client';
import { untilDisabled, eventStatus, publish, webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { type IsolatedSystem, isolatedSystem } from '../support/isolated';
import { eventually, startReceiver, status } from '../support/receiver';
import { testConfig } from '../support/system';

/**
 * A failed event's run waits for a replay (workflows/deliver-event.ts), so a replay must
 * replace it even when the api cannot reach Temporal and leaves the start to a worker's
 * dispatcher: a start that reused the waiting run would deliver nothing.
 */
let iso: IsolatedSystem;
// The suite's Temporal, as the worker sees it (the api's is unreachable).
const temporal = lazyTemporal(testConfig());

beforeAll(async () => {
  iso = await isolatedSystem({ temporalAddress: '127.0.0.1:1' });
  await iso.workerProcess();
}, 120_000);
afterAll(async () => {
  await temporal.close();
  await iso?.close();
});

describe('a replay the api could not start', () => {
  it('is started by the dispatcher, which replaces the failed run waiting for it: the event is delivered', async () => {
    const acct = await createAccount(iso.api);
    const receiver = await startReceiver(status(500));
    const hook = await webhook(iso.api, acct.testKey, receiver.url);
    const event = await publish(iso.api, acct.user.id, 'test');
    await eventStatus(iso.api, acct.testKey, event.id, 'failed');
    const client = await temporal();
    const waiting = await eventually(async () => {
      const d = await client.workflow.getHandle(event.id).describe().catch(() => undefined);
      return d?.status.name === 'RUNNING' && d.typedSearchAttributes.get(EventStatusAttr) === 'failed' ? d.runId : undefined;
    }, 20_000, 'the failed run to wait for a replay');

    receiver.answer(status(200));
    await untilDisabled(iso.api, acct.testKey, hook.id);
    expect((await call(iso.api, 'PATCH', `/webhooks/${hook.id}`, { key: acct.testKey, body: {} })).status).toBe(201);
    expect((await call(iso.api, 'POST', `/events/${event.id}/replay`, { key: acct.testKey })).status).toBe(200);
    await eventStatus(iso.api, acct.testKey, event.id, 'completed', 30_000);
    expect((await client.workflow.getHandle(event.id, waiting).describe()).status.name).toBe('TERMINATED');
    expect(receiver.deliveries.at(-1)!.json.id).toBe(event.id);
    await receiver.close();
  }, 90_000);
});
