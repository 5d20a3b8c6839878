import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MAX_WEBHOOKS_PER_MODE } from '../../src/webhooks/webhooks';
import { newId } from '../../src/ids';
import { call, createAccount, errorOf } from '../support/http';
import { eventually } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem();
});
afterAll(async () => {
  await sys.close();
});

async function seedWebhooks(userId: string, mode: 'test' | 'production', count: number) {
  const rows = Array.from({ length: count }, (_, i) => ({ id: newId('hook'), user_id: userId, mode, url: `https://hooks.example.com/${userId}/${i}`, custom_headers: '[]' }));
  await sys.db.insertInto('webhooks').values(rows).execute();
}

const liveCount = async (userIds: string[], mode: 'test' | 'production') =>
  Number((await sys.db.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', 'in', userIds).where('mode', '=', mode).where('deleted_at', 'is', null).executeTakeFirstOrThrow()).n);

describe('webhooks per account', () => {
  it('count a parent and its children together, and concurrent creates cannot pass the cap', async () => {
    const parent = await createAccount(sys);
    const childRes = await call(sys, 'POST', '/users', { key: parent.prodKey, body: { user: { name: 'Child' } } });
    expect(childRes.status).toBe(201);
    const child = { id: childRes.body.id as string, testKey: (childRes.body.api_keys as { mode: string; key: string }[]).find((k) => k.mode === 'test')!.key };
    await seedWebhooks(parent.user.id, 'test', 60);
    await seedWebhooks(child.id, 'test', MAX_WEBHOOKS_PER_MODE - 61); // one place left in the account

    // Inserts into webhooks wait behind this lock (reads do not), so without the account's
    // lock every create in flight counts 99 before any inserts; the lock makes them queue.
    const blocker = new pg.Client({ connectionString: inject('databaseUrl') });
    await blocker.connect();
    await blocker.query('begin');
    await blocker.query('lock table webhooks in share mode');
    const keys = Array.from({ length: 20 }, (_, i) => (i % 2 ? child.testKey : parent.testKey));
    const pending = Promise.all(keys.map((key, i) => call(sys, 'POST', '/webhooks', { key, body: { webhook: { url: `https://hooks.example.com/new/${i}` } } })));
    // Every connection of the API's pool (5) is waiting on a lock: on the table's, or on the account's.
    await eventually(async () => {
      // (pg_locks, not pg_stat_activity: the latter is a snapshot frozen for the blocker's transaction)
      const { rows } = await blocker.query(`select count(*)::int as n from pg_locks l
        where not l.granted and l.database = (select oid from pg_database where datname = current_database())
          and (l.relation = 'webhooks'::regclass or l.locktype = 'advisory')`);
      return rows[0].n >= 5 ? true : undefined;
    }, 20_000, 'five creates waiting on a lock');
    await blocker.query('commit');
    await blocker.end();
    const results = await pending;
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 422)).toHaveLength(19);
    expect(errorOf(results.find((r) => r.status === 422)!).code).toBe('WEBHOOK.INVALID');
    expect(await liveCount([parent.user.id, child.id], 'test')).toBe(MAX_WEBHOOKS_PER_MODE);

    // A child alone is refused too, and the other mode has its own cap.
    expect((await call(sys, 'POST', '/webhooks', { key: child.testKey, body: { webhook: { url: 'https://hooks.example.com/more' } } })).status).toBe(422);
    expect((await call(sys, 'POST', '/webhooks', { key: parent.prodKey, body: { webhook: { url: 'https://hooks.example.com/live' } } })).status).toBe(201);
  });
});
