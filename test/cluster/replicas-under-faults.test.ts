import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http';
import { until } from '../fault/harness';
import { memorySampler } from '../../bench/processes';
import { type Cluster, type ClusterProcess, CLUSTER_ENV, startCluster } from './cluster';
import { megabytes, SERVICES } from './topology';
import { operationalScenario } from './operational-scenario';
import { type Burst, caughtUpAt, dispatchStates, EVENTS, firstDeliveryAfter, inFlight, type Outcome, report, SCENARIO_TIMEOUT_MS, type Scenario, scenario, settle, SETTLE_TIMEOUT_MS, startBurst, unfinished, unrecordedDeliveries } from './scenario';

/** A fault comes once this many events were answered: mid-burst. */
const FAULT_AT = 300;
/** PostgreSQL stays away at least this long (the floor). */
const OUTAGE_MS = 5000;

/**
 * The production topology of docker-compose.yml on one machine (topology.ts): two api
 * processes, two deliveries workers and a retries worker on a Temporal server and
 * shiphook's PostgreSQL. The scenarios share it, one after the other, each with an
 * account of its own and checking only its own events; what a scenario kills is
 * replaced before the next starts.
 */
describe.sequential('the production topology under faults', () => {
  // Kept, so that a start that outlives the hook's timeout is still closed when it ends.
  let starting: Promise<Cluster> | undefined;
  let cluster: Cluster;
  let memory: ReturnType<typeof memorySampler> | undefined;
  const everyProcess = () => [...cluster.apis, ...cluster.workers, ...cluster.retryWorkers];
  beforeAll(async () => {
    starting = startCluster();
    cluster = await starting;
    // RSS, as a container of its own is charged (the Node binary's pages included), of each
    // process as it is now: a restarted one is sampled under its new pid.
    memory = memorySampler(() => Object.fromEntries(everyProcess().map((p) => [p.label, p.child.process.pid!])), 5_000, 'Rss');
  }, 240_000);
  afterAll(async () => {
    memory?.stop();
    await starting?.then((c) => c.close(), () => undefined);
  }, 120_000);

  /**
   * Runs a burst with a fault in it (`fault` gets the scenario's account) and checks what
   * every scenario must hold; returns what it saw. `inFlight`: events answered but not yet
   * at all three endpoints when the fault came; `caughtUpMs`: from the fault until every one
   * of them had reached both healthy endpoints; `recoverMs`: from the fault until the first
   * delivery after it ended.
   */
  async function burstWithFault(name: string, fault: (s: Scenario) => Promise<{ endedAt: number }>, more: (o: Outcome, b: Burst) => Record<string, unknown> = () => ({})) {
    const started = Date.now();
    const s: Scenario = await scenario(cluster);
    try {
      const burst = startBurst(cluster, s.account.user.id);
      await until(() => burst.acknowledged.size >= FAULT_AT, 180_000, `${FAULT_AT} events published`);
      const faultAt = Date.now();
      const caught = inFlight(s, burst.acknowledged);
      const { endedAt } = await fault(s);
      await burst.done;
      const outcome = await settle(cluster, s);
      const recoveredAt = firstDeliveryAfter(s, endedAt);
      const caughtUp = caughtUpAt(s, caught);
      const observed = {
        ...outcome,
        published: burst.acknowledged.size,
        answers: burst.answers,
        failovers: burst.failovers,
        inFlight: caught.size,
        recoverMs: recoveredAt === undefined ? null : recoveredAt - faultAt,
        caughtUpMs: caughtUp === undefined ? null : Math.max(0, caughtUp - faultAt),
        seconds: Math.round((Date.now() - started) / 1000),
        ...more(outcome, burst),
      };
      report(name, observed);
      const userId = s.account.user.id as string;
      const why = async () =>
        cluster.keepLogs() ??
        `${JSON.stringify(observed)}; events: ${await dispatchStates(cluster, userId).catch((e) => (e as Error).message)}; not ended: ${await unfinished(cluster, userId).catch((e) => (e as Error).message)}; logs: ${cluster.logDir}${everyProcess().map((p) => cluster.lastWords(p, 5)).join('')}`;
      // Every event that was asked for exists once: a publish retried on the other api with its key was not made twice.
      if (outcome.events !== EVENTS || outcome.missing || outcome.wrongStatus) expect.fail(`not every event ended as its endpoints deserved: ${await why()}`);
      expect(burst.acknowledged.size).toBe(EVENTS);
      // The failing endpoint tells the outcomes apart: both kinds are there.
      expect(outcome.completed).toBeGreaterThan(EVENTS / 4);
      expect(outcome.failed).toBeGreaterThan(EVENTS / 4);
      // One run per event. Two never overlap (one workflow id, `USE_EXISTING`), and a
      // dispatcher whose mark of a started event was lost (it died, PostgreSQL went away,
      // the server's answer never came) leaves the event to be claimed again once its lease
      // runs out: by then its run is still going (and is reused) or has closed (and counts
      // as started: `REJECT_DUPLICATE`), and the event is only marked.
      if (outcome.maxStartsPerEvent !== 1) expect.fail(`an event ran ${outcome.maxStartsPerEvent} times: ${await why()}`);
      expect(recoveredAt, 'a delivery after the fault').toBeDefined();
      expect(caughtUp, 'every event in flight at the fault delivered').toBeDefined();
      return { outcome, burst, caught };
    } finally {
      await s.close();
    }
  }

  it('kill -9 of a deliveries worker and an api mid-burst: the survivors carry on, nothing is lost, no event starts twice, duplicates stay within what was in flight', async () => {
    const victims: ClusterProcess[] = [cluster.workers[0]!, cluster.apis[0]!];
    const survivors = [cluster.workers[1]!, cluster.apis[1]!, ...cluster.retryWorkers];
    let unrecorded = 0;
    try {
      const { outcome } = await burstWithFault('replicas killed', async (s) => {
        await Promise.all(victims.map((p) => p.kill()));
        unrecorded = await unrecordedDeliveries(cluster, s.account.user.id as string);
        return { endedAt: Date.now() };
      }, () => ({ unrecorded }));
      // A duplicate is a POST whose outcome was not recorded: an attempt the killed worker
      // was making (sent, perhaps received, not yet recorded), sent again once when a survivor
      // runs its event's task again. Those pairs were all still pending when it died; pairs
      // already recorded are never sent again.
      expect(outcome.duplicates).toBeLessThanOrEqual(unrecorded);
      for (const p of survivors) expect(p.alive, `${p.label} alive`).toBe(true);
    } finally {
      for (const p of victims) if (!p.alive) await p.restart();
    }
  }, SCENARIO_TIMEOUT_MS);

  it('the Temporal server killed (SIGKILL) mid-burst and started again on its database: everything is delivered and ends as deserved', async () => {
    await burstWithFault('temporal killed', async () => {
      await cluster.temporal.kill('SIGKILL');
      await cluster.temporal.start();
      return { endedAt: Date.now() };
    });
    for (const p of everyProcess()) expect(p.alive, `${p.label} alive`).toBe(true);
  }, SCENARIO_TIMEOUT_MS);

  it("shiphook's PostgreSQL stopped for ≥ 5 s mid-burst and started again: the apis answer 503 meanwhile, nothing dies, everything is delivered", async () => {
    let outageMs = 0;
    const { burst } = await burstWithFault('postgres stopped', async () => {
      await cluster.postgres.stop();
      const stopped = Date.now();
      await until(() => Date.now() - stopped >= OUTAGE_MS, OUTAGE_MS + 1000, 'the outage'); // a condition on the clock: the issue asks for ≥ 5 s
      await cluster.postgres.start();
      outageMs = Date.now() - stopped;
      return { endedAt: Date.now() };
    }, () => ({ outageMs }));
    expect(outageMs).toBeGreaterThanOrEqual(OUTAGE_MS);
    expect(burst.answers['503'] ?? 0, 'publishes refused with 503 during the outage').toBeGreaterThan(0);
    for (const p of everyProcess()) expect(p.alive, `${p.label} alive`).toBe(true);
  }, SCENARIO_TIMEOUT_MS);

  it("rate limits mid-burst: one key's requests spread over both api processes share one budget, not one per process", async () => {
    // A test key's budget per second (src/api/rate-limit.ts: a quarter of the live one).
    const budget = Math.max(1, Math.round(Number(CLUSTER_ENV.SHIPHOOK_RATE_LIMIT_PER_SECOND) / 4));
    const seconds = 5;
    const byApi = cluster.apis.map(() => ({ ok: 0, limited: 0 }));
    let elapsed = 0;
    await burstWithFault('rate limits', async (s) => {
      const started = Date.now();
      let n = 0;
      await Promise.all(Array.from({ length: 4 }, async () => {
        while (Date.now() - started < seconds * 1000) {
          const i = n++ % cluster.apis.length;
          const res = await call(cluster.apis[i]!.sys, 'GET', '/webhooks', { key: s.account.testKey });
          if (res.status === 200) byApi[i]!.ok++;
          else if (res.status === 429) byApi[i]!.limited++;
          else throw new Error(`GET /webhooks answered ${res.status}`);
        }
      }));
      elapsed = (Date.now() - started) / 1000;
      return { endedAt: Date.now() };
    }, () => ({ budgetPerSecond: budget, rateSeconds: elapsed, accepted: byApi.reduce((a, b) => a + b.ok, 0), byApi }));
    const accepted = byApi.reduce((a, b) => a + b.ok, 0);
    // Fixed one-second windows, each opened by the first request after the last ended:
    // a run of `elapsed` seconds touches at most ceil(elapsed) + 1 of them (the tolerance).
    // One budget per process would let twice the budget through per window.
    expect(accepted).toBeLessThanOrEqual(budget * (Math.ceil(elapsed) + 1));
    expect(accepted).toBeGreaterThanOrEqual(budget * Math.floor(elapsed) * 0.5);
    // Both processes served and refused: the budget is one, whichever process counts.
    for (const a of byApi) expect(a.ok > 0 && a.limited > 0, JSON.stringify(byApi)).toBe(true);
  }, SCENARIO_TIMEOUT_MS);

  it('operational webhooks under kill -9 of a deliveries worker and the retries worker: one webhook.failing, one delivery.exhausted per failed event', async () => {
    const victims = [cluster.workers[0]!, cluster.retryWorkers[0]!];
    const outcome = await operationalScenario(cluster, victims, SETTLE_TIMEOUT_MS);
    report('operational webhooks', { ...outcome });
    expect(outcome.failed).toBe(outcome.events);
    // Once per state change: the run's start once, each delivery's exhaustion once, whichever worker saw it.
    expect(outcome.emitted).toEqual({ 'webhook.failing': 1, 'delivery.exhausted': outcome.events });
    expect(outcome.exhaustedEvents).toBe(outcome.events);
    expect(outcome.exhaustedTwice).toBe(0);
    expect(outcome.received).toBe(outcome.events + 1);
    for (const p of everyProcess()) expect(p.alive, `${p.label} alive`).toBe(true);
  }, SCENARIO_TIMEOUT_MS);

  it("every process stayed within its compose service's memory limit through the scenarios above", async () => {
    const peaks = (await memory!.scenario()).by_process;
    report('memory', { rssMb: peaks });
    for (const p of everyProcess()) {
      const limit = megabytes(SERVICES[p.service].memLimit);
      expect(peaks[p.label], `${p.label} sampled`).toBeGreaterThan(0);
      expect(peaks[p.label]!, `${p.label}: peak RSS against its service's mem_limit (${SERVICES[p.service].memLimit})`).toBeLessThan(limit);
    }
  });
});
