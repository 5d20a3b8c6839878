import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { freePort } from '../../src/launcher/ports';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '../../src/launcher/postgres';
import { authenticatedRead, BURST, endpoint, everythingDelivered, expectAlive, FAULT_TEST_TIMEOUT_MS, faultSystem, RECOVERY_TIMEOUT_MS, report, startBurst, until } from './harness';

/** The outage lasts at least this long (the floor). */
const OUTAGE_MS = 5000;

it('PostgreSQL stopped (fast shutdown) mid-burst for ≥ 5 s, then started on the same data: the api answers 503 meanwhile, nothing dies, everything is delivered', async () => {
  // A PostgreSQL server of this test's own: the suite's shared one is never stopped.
  const dir = mkdtempSync(path.join(tmpdir(), 'shiphook-fault-pg-'));
  const port = await freePort();
  let postgres: EmbeddedDatabase = await startEmbeddedPostgres(dir, { port, persistent: true });
  let f: Awaited<ReturnType<typeof faultSystem>> | undefined;
  try {
    f = await faultSystem({ databaseUrl: postgres.url });
    const endpoints = f.receivers.map(endpoint);
    const burst = startBurst(() => f!.api.sys, f.account.user.id);
    await until(() => burst.acknowledged.length >= 150, 120_000, '150 events published');
    const publishedAtStop = burst.acknowledged.length;
    await postgres.stop(); // SIGINT: PostgreSQL's fast shutdown
    const stopped = Date.now();
    // The outage: the publisher keeps sending and must be answered 503 (never 500, never a hang).
    await until(() => Date.now() - stopped >= OUTAGE_MS && (burst.answers['503'] ?? 0) > 0, 60_000, 'a 503 during the outage');
    postgres = await startEmbeddedPostgres(dir, { port, persistent: true });
    const restarted = Date.now();
    await burst.done;
    const observed = await everythingDelivered(f.iso.api.db, f.account.user.id, endpoints, RECOVERY_TIMEOUT_MS, [f.api, f.worker]);
    expect(observed.events).toBeGreaterThanOrEqual(BURST);
    expect(publishedAtStop).toBeLessThan(BURST);
    expect(Object.keys(burst.answers).sort()).toEqual(['201', '503']);
    expect(Object.keys(burst.errorCodes)).toEqual(['SERVICE_UNAVAILABLE']);
    expect(burst.slowestMs).toBeLessThan(10_000);
    // The api's key cache listens again: an authenticated request works through the restarted database.
    expect(await authenticatedRead(f.api.sys, f.account.testKey)).toBe(200);
    expectAlive(f.api, f.worker);
    report('postgres restarted', { ...observed, publishedAtStop, outageMs: restarted - stopped, answered503: burst.answers['503'], slowestAnswerMs: burst.slowestMs, recoveredInMs: Date.now() - restarted });
  } finally {
    await f?.close();
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, FAULT_TEST_TIMEOUT_MS);
