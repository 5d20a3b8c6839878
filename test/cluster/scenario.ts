import { createHash, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { sql } from 'kysely';
import { webhook } from '../support/events';
import { type Account, call, createAccount } from '../support/http';
import { type Receiver, startReceiver } from '../support/receiver';
import { TEST_ENV } from '../support/test-config';
import { until } from '../fault/harness';
import { type Cluster, CLUSTER_ENV } from './cluster';

/** Events per scenario (the floor), each to three webhooks. */
export const EVENTS = 1000;
/** Publishes in flight at once, spread over the api processes. */
const IN_FLIGHT = 8;
/** How long a scenario waits, after its burst, for every event to be delivered and to end. */
export const SETTLE_TIMEOUT_MS = 240_000;
/** A scenario with its burst, fault and recovery on a loaded 2-core machine. */
export const SCENARIO_TIMEOUT_MS = 420_000;

/** Attempts a URL gets before its delivery fails: the first and one per retry delay. */
const ATTEMPTS = CLUSTER_ENV.SHIPHOOK_RETRY_DELAYS.split(',').length + 1;

/**
 * The failing endpoint refuses about every other event (decided by the event id, so the
 * same on every attempt and every receiver restart): those must end `failed`, the rest
 * `completed`. An endpoint that failed everything would not tell the two apart.
 */
export const refuses = (eventId: string) => createHash('sha256').update(eventId).digest()[0]! % 2 === 1;

/** An account of the scenario's own with three webhooks: two healthy endpoints and the failing one. */
export interface Scenario {
  account: Account;
  healthy: Receiver[];
  failing: Receiver;
  close(): Promise<void>;
}

export async function scenario(cluster: Cluster): Promise<Scenario> {
  const healthy = [await startReceiver(), await startReceiver()];
  const failing = await startReceiver((d, _i, res) => {
    const code = typeof d.json?.id === 'string' && refuses(d.json.id) ? 500 : 200;
    res.writeHead(code).end(code === 200 ? 'ok' : 'nope');
  });
  const receivers = [...healthy, failing];
  try {
    const api = cluster.apis[0]!.sys;
    const account = await createAccount(api);
    for (const r of receivers) await webhook(api, account.testKey, r.url);
    return { account, healthy, failing, close: async () => void (await Promise.all(receivers.map((r) => r.close()))) };
  } catch (err) {
    await Promise.all(receivers.map((r) => r.close()));
    throw err;
  }
}

/** What a burst saw while publishing. */
export interface Burst {
  /** Distinct event ids answered 201. */
  readonly acknowledged: Set<string>;
  /** Answers by status (`network`: refused or reset). */
  answers: Record<string, number>;
  /** Publishes sent again to the next api after a failure, with the same key. */
  failovers: number;
  done: Promise<void>;
}

const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };

/**
 * Publishes `EVENTS` events of one account through the api processes alternately. Each
 * is a batch of one event with its own `idempotency_key`, which the API claims in the
 * event's own transaction: a publish whose api died mid-request either committed with
 * its key or left nothing, so the same request sent to the next api answers the first
 * event's id or publishes it now — never a second event. (The `Idempotency-Key` header
 * keeps a key in flight until its answer is stored after the commit: one its api died
 * holding is refused for minutes, src/idempotency/store.ts.)
 */
export function startBurst(cluster: Cluster, userId: string): Burst {
  const burst: Burst = { acknowledged: new Set(), answers: {}, failovers: 0, done: Promise.resolve() };
  const run = randomUUID();
  let next = 0;
  const publishOne = async (n: number) => {
    const event = { user_id: userId, mode: 'test', description: 'tracker.updated', result: { id: `trk_${n}`, object: 'Tracker', status: 'in_transit' }, idempotency_key: `cluster-${run}-${n}` };
    const deadline = Date.now() + 180_000;
    for (let attempt = 0; ; attempt++) {
      if (Date.now() > deadline) throw new Error(`event ${n} could not be published within 180 s`);
      const api = cluster.apis[(n + attempt) % cluster.apis.length]!;
      let status: string;
      try {
        const res = await call(api.sys, 'POST', '/admin/v1/events/batch', { headers: ADMIN, body: { events: [event] } });
        status = String(res.status);
        if (res.status === 201) burst.acknowledged.add(res.body.events[0].id);
      } catch {
        status = 'network';
      }
      burst.answers[status] = (burst.answers[status] ?? 0) + 1;
      if (status === '201') return;
      // 503: the database is away; network: the api was killed (or is not back yet).
      if (!['503', 'network'].includes(status)) throw new Error(`publishing answered ${status}`);
      burst.failovers++;
      if (attempt % cluster.apis.length === cluster.apis.length - 1) await new Promise((r) => setTimeout(r, 100)); // every api tried: a breath
    }
  };
  burst.done = Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < EVENTS) await publishOne(next++);
    }),
  ).then(() => undefined);
  return burst;
}

/** What a scenario observed once every event ended. */
export interface Outcome {
  events: number;
  /** Requests received by the three endpoints for this account's events. */
  deliveries: number;
  /** Requests beyond what each (event, URL) needed: one 2XX, or every attempt of a refused one. */
  duplicates: number;
  completed: number;
  failed: number;
  /** Events whose status is not the one their endpoints deserved. */
  wrongStatus: number;
  /** (event, URL) pairs that never arrived. */
  missing: number;
  /** The most delivery workflow runs one event had (Temporal visibility), and how many events had more than one. */
  maxStartsPerEvent: number;
  startedTwice: number;
}

/**
 * Waits until every event of the account arrived at every endpoint (the failing one:
 * every attempt) and ended `completed` or `failed`, then counts what happened. A wait
 * that runs out still returns what it saw, for the assertions to show.
 */
export async function settle(cluster: Cluster, s: Scenario, timeoutMs = SETTLE_TIMEOUT_MS): Promise<Outcome> {
  const userId = s.account.user.id as string;
  let outcome: Outcome | undefined;
  const count = async (): Promise<Outcome> => {
    const rows = await cluster.db.selectFrom('events').select(['id', 'status']).where('user_id', '=', userId).execute();
    const ids = new Set(rows.map((r) => r.id));
    const received = new Map<string, number>(); // `${receiver}|${event}` → requests
    const receivers = [...s.healthy, s.failing];
    receivers.forEach((r, i) => {
      for (const d of r.deliveries) if (ids.has(d.json?.id)) received.set(`${i}|${d.json.id}`, (received.get(`${i}|${d.json.id}`) ?? 0) + 1);
    });
    let deliveries = 0;
    let duplicates = 0;
    let missing = 0;
    let wrongStatus = 0;
    for (const r of rows) {
      receivers.forEach((receiver, i) => {
        const got = received.get(`${i}|${r.id}`) ?? 0;
        const needed = receiver === s.failing && refuses(r.id) ? ATTEMPTS : 1;
        deliveries += got;
        if (got < needed) missing++;
        duplicates += Math.max(0, got - needed);
      });
      if (r.status !== (refuses(r.id) ? 'failed' : 'completed')) wrongStatus++;
    }
    return {
      events: rows.length,
      deliveries,
      duplicates,
      completed: rows.filter((r) => r.status === 'completed').length,
      failed: rows.filter((r) => r.status === 'failed').length,
      wrongStatus,
      missing,
      maxStartsPerEvent: 0,
      startedTwice: 0,
    };
  };
  await until(async () => {
    outcome = await count().catch(() => outcome); // the database may be coming back
    return !!outcome && outcome.events >= EVENTS && outcome.missing === 0 && outcome.wrongStatus === 0;
  }, timeoutMs, 'every event delivered and ended as its endpoints deserved').catch(() => undefined);
  outcome ??= await count();
  // A re-claim comes only once a lost mark's lease ran out: runs are counted once every
  // event is marked dispatched, so a second run started by it would be seen.
  await until(async () => {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from events where user_id = ${userId} and dispatched_at is null`.execute(cluster.db);
    return rows[0]!.n === 0;
  }, 60_000, 'every event marked dispatched').catch(() => undefined);
  const runs = await runsPerEvent(cluster, userId, outcome.events);
  return { ...outcome, maxStartsPerEvent: Math.max(0, ...runs.values()), startedTwice: [...runs.values()].filter((n) => n > 1).length };
}

/**
 * The delivery workflow runs started for each event of the account, from Temporal's
 * visibility (every run carries ShiphookUserId, and its workflow id is its event's): two dispatchers that both started an
 * event would show as two runs of its workflow id. Visibility is written after the
 * fact: it waits until it lists a run for every event.
 */
async function runsPerEvent(cluster: Cluster, userId: string, events: number): Promise<Map<string, number>> {
  const connection = await Connection.connect({ address: cluster.temporal.address });
  try {
    const client = new Client({ connection });
    let runs = new Map<string, number>();
    await until(async () => {
      runs = new Map();
      for await (const wf of client.workflow.list({ query: `ShiphookUserId = '${userId}'` })) {
        // The workflow id is the event id (deliveryWorkflowId): a second run of an event shares it.
        runs.set(wf.workflowId, (runs.get(wf.workflowId) ?? 0) + 1);
      }
      return runs.size >= events;
    }, 60_000, 'a delivery run of every event in Temporal visibility').catch(() => undefined);
    return runs;
  } finally {
    await connection.close();
  }
}

/** The first request any endpoint received at or after `since` (ms since the epoch), or undefined. */
export function firstDeliveryAfter(s: Scenario, since: number): number | undefined {
  const times = [...s.healthy, s.failing].flatMap((r) => r.deliveries.filter((d) => d.at >= since).map((d) => d.at));
  return times.length ? Math.min(...times) : undefined;
}

/** Events published (answered 201) that had not yet reached all three endpoints: what a fault can catch in flight. */
export function inFlight(s: Scenario, acknowledged: Set<string>): Set<string> {
  const reached = [...s.healthy, s.failing].map((r) => new Set(r.deliveries.map((d) => d.json?.id)));
  return new Set([...acknowledged].filter((id) => reached.some((ids) => !ids.has(id))));
}

/**
 * When every one of `events` had reached both healthy endpoints (ms since the epoch), or
 * undefined if one never did: given the events in flight at a fault, when the system
 * caught up with what the fault interrupted.
 */
export function caughtUpAt(s: Scenario, events: Set<string>): number | undefined {
  let last = 0;
  for (const r of s.healthy) {
    const first = new Map<string, number>();
    for (const d of r.deliveries) if (events.has(d.json?.id) && !first.has(d.json.id)) first.set(d.json.id, d.at);
    if (first.size < events.size) return undefined;
    last = Math.max(last, ...first.values());
  }
  return last;
}

/** One line per scenario on stderr, for the lead to quote: `[cluster] {...}`. */
export function report(name: string, observed: Record<string, unknown>): void {
  process.stderr.write(`[cluster] ${JSON.stringify({ scenario: name, ...observed })}\n`);
}

/**
 * The account's (event, URL) pairs not yet recorded as delivered or failed: every attempt a
 * worker is making is among them until its outcome is recorded, so a worker killed now can
 * have left at most these to be sent again.
 */
export async function unrecordedDeliveries(cluster: Cluster, userId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from event_deliveries d join events e on e.id = d.event_id
    where e.user_id = ${userId} and d.state = 'pending'`.execute(cluster.db);
  return rows[0]!.n;
}

/** The user's events by status and dispatch state, for a failure's message. */
export async function dispatchStates(cluster: Cluster, userId: string): Promise<string> {
  const { rows } = await sql<{ status: string; dispatched: boolean; n: number }>`
    select status, dispatched_at is not null as dispatched, count(*)::int as n from events where user_id = ${userId} group by 1, 2 order by 1, 2`.execute(cluster.db);
  return rows.map((r) => `${r.status}/${r.dispatched ? 'dispatched' : 'waiting'}: ${r.n}`).join(', ');
}

/** The account's events that did not end as they should, with their delivery rows, for a failure's message (the first few). */
export async function unfinished(cluster: Cluster, userId: string, limit = 5): Promise<string> {
  const { rows } = await sql<{ id: string; status: string; dispatched: boolean; deliveries: string }>`
    select e.id, e.status, e.dispatched_at is not null as dispatched,
      string_agg(d.url || ' ' || d.state || ' after ' || d.attempts, '; ' order by d.url) as deliveries
    from events e join event_deliveries d on d.event_id = e.id
    where e.user_id = ${userId} and e.status not in ('completed', 'failed')
    group by e.id, e.status, e.dispatched_at order by e.id limit ${limit}`.execute(cluster.db);
  if (rows.length) await keepHistories(cluster, rows.map((r) => r.id));
  return rows.map((r) => `${r.id} ${r.status} (${r.dispatched ? 'dispatched' : 'not dispatched'}): ${r.deliveries}`).join(' | ') || 'none';
}

/**
 * Writes each event's workflow, as Temporal describes it (status, pending activities and
 * workflow task) and its history, to `<logDir>/<event id>.json`: what a failure needs read
 * before the cluster, and Temporal's data with it, is gone.
 */
async function keepHistories(cluster: Cluster, eventIds: string[]): Promise<void> {
  const connection = await Connection.connect({ address: cluster.temporal.address });
  try {
    const client = new Client({ connection });
    for (const id of eventIds) {
      const handle = client.workflow.getHandle(id);
      const [described, history] = await Promise.all([
        handle.describe().then((d) => d.raw, (e: Error) => ({ error: e.message })),
        handle.fetchHistory().catch((e: Error) => ({ error: e.message })),
      ]);
      const json = JSON.stringify({ described, history }, (_k, v) => {
        if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
        // Protobuf's 64-bit numbers (Long) and bigints, as their digits.
        if (typeof v === 'bigint' || (v && typeof v === 'object' && typeof v.toNumber === 'function' && 'low' in v)) return v.toString();
        return v;
      }, 1);
      writeFileSync(path.join(cluster.logDir, `${id}.json`), json);
    }
  } finally {
    await connection.close();
  }
}
