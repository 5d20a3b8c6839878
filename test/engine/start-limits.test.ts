import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids';
import { WebhookUrlsAttr } from '../../src/engine/contract';
import { eventStatus, publish, webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { isolatedSystem } from '../support/isolated';
import { scrape, total } from '../support/metrics';
import { eventually, startReceiver } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };

/**
 * `base` padded to exactly `length` characters in its path (not its query string,
 * which Temporal only ever sees masked as `?***`).
 */
const longUrl = (base: string, i: number, length: number) => {
  const prefix = `${base}/${i}/`;
  return prefix + 'x'.repeat(length - prefix.length);
};

let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

describe('what Temporal limits in size', () => {
  it('100 webhooks of 2,000-character URLs (the most an account may have): the event is delivered to every one', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver();
    try {
      const urls = Array.from({ length: 100 }, (_, i) => longUrl(receiver.url, i, 2000));
      for (const url of urls) await webhook(sys, acct.testKey, url);
      const event = await publish(sys, acct.user.id, 'test');
      await eventStatus(sys, acct.testKey, event.id, 'completed', 60_000);
      await receiver.waitFor(100, 30_000);
      // Each URL at least once (a POST slower than the attempt timeout on a busy machine is sent again).
      expect(new Set(receiver.deliveries.map((d) => d.json.id))).toEqual(new Set([event.id]));
      expect(new Set(receiver.deliveries.map((d) => new URL(d.url, 'http://x').pathname.split('/')[2])).size).toBe(100);
      // The workflow's URL search attribute stays under Temporal's 2 KB per value.
      const described = await (await sys.temporal()).workflow.getHandle(event.id).describe();
      const listed = described.typedSearchAttributes.get(WebhookUrlsAttr) ?? [];
      expect(listed.length).toBeGreaterThan(0);
      expect(Buffer.byteLength(JSON.stringify(listed))).toBeLessThanOrEqual(1500);
    } finally {
      await receiver.close();
    }
  });

  it('a start Temporal refuses for good is an incident: marked once, logged once, not retried, listed for operators, delivered after a replay', async () => {
    const iso = await isolatedSystem();
    const receiver = await startReceiver();
    try {
      const acct = await createAccount(iso.api);
      const real = await webhook(iso.api, acct.testKey, receiver.url);
      // Beyond what the API allows (100 per mode), written straight to the table: 1,100
      // URLs of 2,000 characters make a workflow input over the server's 2 MB blob limit.
      await iso.api.db
        .insertInto('webhooks')
        .values(Array.from({ length: 1100 }, (_, i) => ({ id: newId('hook'), user_id: acct.user.id, mode: 'test' as const, url: longUrl(receiver.url, i, 2000), webhook_secret: null })))
        .execute();
      const worker = await iso.workerProcess();
      const event = await publish(iso.api, acct.user.id, 'test');
      const marked = await eventually(async () => {
        const row = await iso.api.db.selectFrom('events').select(['dispatch_failed_at', 'dispatch_error', 'dispatched_at']).where('id', '=', event.id).executeTakeFirstOrThrow();
        return row.dispatch_failed_at ? row : undefined;
      }, 30_000, 'the event to be marked as a dispatch incident');
      expect(marked.dispatched_at).toBeNull();
      expect(marked.dispatch_error).toMatch(/size|limit|exceed/i);

      // The dispatcher keeps working (another account's event goes out) and never tries the refused one again.
      const other = await createAccount(iso.api);
      const otherReceiver = await startReceiver();
      await webhook(iso.api, other.testKey, otherReceiver.url);
      const later = await publish(iso.api, other.user.id, 'test');
      await eventStatus(iso.api, other.testKey, later.id, 'completed', 30_000);
      await otherReceiver.close();
      const incidentLines = worker.logs.filter((l) => l.includes(event.id) && l.includes('dispatch incident'));
      expect(incidentLines).toHaveLength(1);
      // …and counted once, on the worker's metrics.
      const samples = await scrape(`http://127.0.0.1:${worker.httpPort}/metrics`);
      expect(total(samples, 'shiphook_dispatch_start_failures_total', { kind: 'incident' })).toBe(1);
      expect(receiver.deliveries).toHaveLength(0);
      const listed = await call(iso.api, 'GET', '/admin/v1/events/dispatch_incidents', { headers: ADMIN });
      expect(listed.body.events.map((e: { id: string }) => e.id)).toEqual([event.id]);

      // The operator fixes the cause (the extra webhooks go) and replays the incidents.
      await iso.api.db.deleteFrom('event_deliveries').where('event_id', '=', event.id).where('webhook_id', '!=', real.id).execute();
      const replay = await call(iso.api, 'POST', '/admin/v1/events/replay', { headers: ADMIN, body: { dispatch_failed: true } });
      expect(replay.status).toBe(202);
      expect(replay.body).toMatchObject({ matched: 1 });
      await eventStatus(iso.api, acct.testKey, event.id, 'completed', 30_000);
      expect(receiver.deliveries.map((d) => d.json.id)).toEqual([event.id]);
      const cleared = await iso.api.db.selectFrom('events').select(['dispatch_failed_at', 'dispatch_error']).where('id', '=', event.id).executeTakeFirstOrThrow();
      expect(cleared).toEqual({ dispatch_failed_at: null, dispatch_error: null });
      expect(worker.alive).toBe(true);
    } finally {
      await receiver.close();
      await iso.close();
    }
  });
});
