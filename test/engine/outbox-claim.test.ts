import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimUndispatched } from '../../src/engine/outbox';
import { redactUrl } from '../../src/webhooks/url';
import { newId } from '../../src/ids';
import { createAccount } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';

// The dispatcher's claim, read back from PostgreSQL. Everything happens in one transaction
// that is rolled back: the running workers' dispatchers never see these events (they are
// not committed), and the events are dated 2000 so that this claim takes them first.
let sys: TestSystem;

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(async () => {
  await sys.close();
});

class RolledBack extends Error {}

describe("the dispatcher's claim", () => {
  it('takes the oldest undispatched events with their pending deliveries in one statement, and leases them', async () => {
    const acct = await createAccount(sys);
    const [a, b, c] = [newId('hook'), newId('hook'), newId('hook')].sort();
    const urls = { [a!]: 'https://user:secret@example.test/a?token=t', [b!]: 'https://example.test/b', [c!]: 'https://example.test/c' };
    const [withDeliveries, without] = [newId('evt'), newId('evt')];
    const event = (id: string, createdAt: string) => ({ id, user_id: acct.user.id, mode: 'test' as const, description: 'tracker.updated', result: '{}', previous_attributes: '{}', created_at: new Date(createdAt) });

    await sys.db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('webhooks').values(Object.entries(urls).map(([id, url]) => ({ id, user_id: acct.user.id, mode: 'test' as const, url }))).execute();
        await trx.insertInto('events').values([event(withDeliveries!, '2000-01-01T00:00:00Z'), event(without!, '2000-01-02T00:00:00Z')]).execute();
        await trx
          .insertInto('event_deliveries')
          .values([
            { event_id: withDeliveries!, webhook_id: a!, url: urls[a!]! },
            { event_id: withDeliveries!, webhook_id: b!, url: urls[b!]!, state: 'completed', attempts: 1 },
            { event_id: withDeliveries!, webhook_id: c!, url: urls[c!]! },
          ])
          .execute();

        const claimed = await claimUndispatched(trx, 2, 60_000);
        expect(claimed.map((e) => e.id).sort()).toEqual([withDeliveries, without].sort());
        const first = claimed.find((e) => e.id === withDeliveries)!;
        expect(first).toMatchObject({ user_id: acct.user.id, mode: 'test', description: 'tracker.updated', status: 'in_queue', replay_id: null });
        // Only the pending deliveries, in webhook order, URLs redacted (no user-info, no query).
        expect(first.targets).toEqual([
          { webhookId: a, url: redactUrl(urls[a!]!) },
          { webhookId: c, url: 'https://example.test/c' },
        ]);
        expect(JSON.stringify(claimed)).not.toContain('secret');
        expect(claimed.find((e) => e.id === without)!.targets).toEqual([]);

        const leases = await trx.selectFrom('events').select(['id', 'dispatch_lease_until', 'dispatched_at']).where('id', 'in', [withDeliveries!, without!]).execute();
        const now = (await trx.selectNoFrom((eb) => eb.fn<Date>('now').as('now')).executeTakeFirstOrThrow()).now;
        // Leased for the next minute: no other dispatcher claims them meanwhile (a second
        // claim here would lock other tests' committed events until the rollback).
        for (const l of leases) {
          expect(l.dispatched_at).toBeNull();
          expect(l.dispatch_lease_until!.getTime()).toBeGreaterThan(now.getTime() + 50_000);
        }
        throw new RolledBack();
      })
      .catch((err) => {
        if (!(err instanceof RolledBack)) throw err;
      });

    expect(await sys.db.selectFrom('events').select('id').where('id', 'in', [withDeliveries!, without!]).execute()).toEqual([]);
  });
});
