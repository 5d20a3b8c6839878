import path from 'node:path';
import { sql } from 'kysely';
import { expect } from 'vitest';
import type { Db } from '../../src/db/database';
import { freePort } from '../../src/launcher/ports';
import { webhook } from '../support/events';
import { type Account, call, createAccount } from '../support/http';
import { type IsolatedSystem, isolatedSystem, type ShiphookProcess } from '../support/isolated';
import { type Delivery, type Receiver, startReceiver } from '../support/receiver';
import type { TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

/** Events per burst (the issue's floor). */
export const BURST = 500;
/** Long enough for a burst plus a fault and its recovery on a busy 2-core machine. */
export const FAULT_TEST_TIMEOUT_MS = 480_000;
/** How long a fault test waits for everything to be delivered after the fault. */
export const RECOVERY_TIMEOUT_MS = 300_000;

/**
 * Timings for the fault tests' processes. The suite's (TEST_ENV: 1.5 s per attempt,
 * 3 retries within 2 s) turn a receiver slowed by a loaded machine into `failed`
 * events; faults are about infrastructure, so attempts get time and a schedule that
 * spans a minute, and no webhook is disabled meanwhile.
 */
export const FAULT_ENV = {
  SHIPHOOK_ATTEMPT_TIMEOUT: '10s',
  SHIPHOOK_RETRY_DELAYS: '1s,2s,4s,8s,8s,8s,8s,8s,8s',
  SHIPHOOK_DISABLE_AFTER_FAILURES: '100000',
  SHIPHOOK_DISABLE_AFTER: '1h',
};

const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };

/** What a burst saw while publishing through the API. */
export interface Burst {
  /** Event ids the API answered 201 for. */
  acknowledged: string[];
  /** Answers by status (or `network` for a refused/reset connection), and error codes. */
  answers: Record<string, number>;
  errorCodes: Record<string, number>;
  /** The slowest answer (any status), ms. */
  slowestMs: number;
  done: Promise<void>;
}

/**
 * Publishes `count` events through the operator API with a few requests in
 * flight, as a producer does: a request that fails (503, connection refused or
 * reset) is sent again until it is answered 201.
 */
export function startBurst(api: () => TestSystem, userId: string, count = BURST, inFlight = 6): Burst {
  const burst: Burst = { acknowledged: [], answers: {}, errorCodes: {}, slowestMs: 0, done: Promise.resolve() };
  let next = 0;
  const publishOne = async () => {
    const deadline = Date.now() + 180_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error('an event could not be published within 180 s');
      const started = Date.now();
      let status: string;
      try {
        const res = await call(api(), 'POST', '/admin/v1/events', {
          headers: ADMIN,
          body: { user_id: userId, mode: 'test', description: 'tracker.updated', result: { id: 'trk_0123', object: 'Tracker', status: 'in_transit' } },
        });
        status = String(res.status);
        if (res.status === 201) burst.acknowledged.push(res.body.id);
        else if (res.body?.error?.code) burst.errorCodes[res.body.error.code] = (burst.errorCodes[res.body.error.code] ?? 0) + 1;
      } catch {
        status = 'network';
      }
      burst.slowestMs = Math.max(burst.slowestMs, Date.now() - started);
      burst.answers[status] = (burst.answers[status] ?? 0) + 1;
      if (status === '201') return;
      if (status !== '503' && status !== 'network') throw new Error(`publishing answered ${status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  burst.done = Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) {
        next++;
        await publishOne();
      }
    }),
  ).then(() => undefined);
  return burst;
}

/** Polls `check` every 100 ms until true (waits on conditions, never on fixed sleeps). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A webhook URL and every delivery it received (across restarts of its receiver). */
export interface Endpoint {
  url: string;
  deliveries(): Delivery[];
}

export const endpoint = (r: Receiver): Endpoint => ({ url: r.url, deliveries: () => r.deliveries });

/**
 * Waits until every event of the user in the database (answered or not: a
 * publish whose answer was lost still committed its event) arrived at every
 * endpoint at least once and is `completed`. Returns what the test observed.
 */
export async function everythingDelivered(db: Db, userId: string, endpoints: Endpoint[], timeoutMs: number, watched: ShiphookProcess[] = []) {
  const ids = (await db.selectFrom('events').select('id').where('user_id', '=', userId).execute()).map((r) => r.id);
  let missing = 0;
  let notCompleted: Record<string, number> = {};
  await until(async () => {
    missing = 0;
    for (const e of endpoints) {
      const got = new Set(e.deliveries().map((d) => d.json?.id));
      for (const id of ids) if (!got.has(id)) missing++;
    }
    if (missing > 0) return false;
    const rows = await db
      .selectFrom('events')
      .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
      .where('user_id', '=', userId)
      .where('status', '!=', 'completed')
      .groupBy('status')
      .execute();
    notCompleted = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    return rows.length === 0;
  }, timeoutMs, 'every (event, URL) pair delivered and every event completed').catch(async (err) => {
    const states = await dispatchStates(db, userId).catch((e) => `(unreadable: ${(e as Error).message})`);
    const told = (await Promise.all(watched.map(async (p) => safely(() => lastWords(p)) + (await someMetrics(p))))).join('');
    throw new Error(`${(err as Error).message}; last seen: ${missing} pairs missing, events not completed by status ${JSON.stringify(notCompleted)}; events by status and dispatch: ${states}${told}`);
  });
  const deliveries = endpoints.reduce((n, e) => n + e.deliveries().filter((d) => ids.includes(d.json?.id)).length, 0);
  return { events: ids.length, pairs: ids.length * endpoints.length, deliveries, duplicates: deliveries - ids.length * endpoints.length };
}

/** A system of its own for one fault: its database, task queue, api and worker processes, receivers and an account with a webhook per receiver. */
export async function faultSystem(opts: { databaseUrl?: string; temporalAddress?: string; receivers?: number; env?: Record<string, string> } = {}) {
  const env = { ...FAULT_ENV, ...opts.env };
  const iso: IsolatedSystem = await isolatedSystem({ databaseUrl: opts.databaseUrl, temporalAddress: opts.temporalAddress, env });
  const receivers: Receiver[] = [];
  try {
    for (let i = 0; i < (opts.receivers ?? 2); i++) receivers.push(await startReceiver());
    const account: Account = await createAccount(iso.api);
    for (const r of receivers) await webhook(iso.api, account.testKey, r.url);
    // A port it can come back on after a kill (freePort's are outside the range the kernel hands out by itself).
    const api = await iso.apiProcess({ port: await freePort() });
    const worker = await iso.workerProcess({ temporalAddress: opts.temporalAddress });
    return {
      iso,
      receivers,
      account,
      api,
      worker,
      startWorker: () => iso.workerProcess({ temporalAddress: opts.temporalAddress }),
      async close() {
        await Promise.all(receivers.map((r) => r.close()));
        await iso.close();
      },
    };
  } catch (err) {
    await Promise.all(receivers.map((r) => r.close()));
    await iso.close();
    throw err;
  }
}

/** How many warnings a failed wait quotes per process (the log folder is gone after a CI run). */
const QUOTED_WARNINGS = 15;

/** A process's state and its last warnings and errors, with its last line of any level. */
function lastWords(p: ShiphookProcess): string {
  const lines = p.logs;
  const warnings = lines.filter((l) => /"level":"(warn|error|fatal)"/.test(l)).slice(-QUOTED_WARNINGS);
  const cut = (l: string) => (l.length > 400 ? l.slice(0, 400) + '…' : l);
  return `\n--- ${p.logFile}: ${p.alive ? 'running' : `exited (${p.child.exitCode ?? p.child.signalCode})`}, ${lines.length} lines, the last:\n${cut(lines.at(-1) ?? '')}\nits last warnings:\n${warnings.map(cut).join('\n')}`;
}

/** A diagnostic that fails says why instead of hiding the timeout it should explain. */
function safely(tell: () => string): string {
  try {
    return tell();
  } catch (err) {
    return `\n(unreadable: ${(err as Error).message})`;
  }
}

/** The user's events counted by status and how far their dispatch got. */
async function dispatchStates(db: Db, userId: string): Promise<string> {
  const { rows } = await sql<{ status: string; dispatch: string; n: number }>`
    select status, case when dispatch_failed_at is not null then 'incident' when dispatched_at is not null then 'dispatched'
      when dispatch_lease_until > now() then 'leased' else 'waiting' end as dispatch, count(*)::int as n
    from events where user_id = ${userId} group by 1, 2 order by 1, 2`.execute(db);
  return rows.map((r) => `${r.status}/${r.dispatch}: ${r.n}`).join(', ');
}

/** What a worker's /metrics says about its dispatcher, attempts and Temporal task slots (nothing for an api). */
async function someMetrics(p: ShiphookProcess): Promise<string> {
  if (!p.alive || !path.basename(p.logFile).startsWith('worker-')) return '';
  const text = await fetch(`http://127.0.0.1:${p.httpPort}/metrics`, { signal: AbortSignal.timeout(3000) })
    .then((r) => r.text())
    .catch((e) => `(unreadable: ${(e as Error).message})`);
  const wanted = /^(shiphook_(delivery_attempts_total|dispatcher_claimed_events_total|dispatch_start_failures_total)|temporal_\w*(slots|pollers|task_execution_failed|sticky_cache))/;
  // Counters that stayed 0 say nothing; a gauge at 0 (no task slot left, no poller) may say it all.
  const lines = text.split('\n').filter((l) => (wanted.test(l) && !/_total(\{.*\})? 0$/.test(l)) || l.startsWith('(unreadable'));
  return `\nits metrics (counters at 0 left out):\n${lines.join('\n')}`;
}

/** Deliveries received so far across endpoints. */
export const received = (endpoints: Endpoint[]) => endpoints.reduce((n, e) => n + e.deliveries().length, 0);

/** The processes that were not killed are all still running. */
export function expectAlive(...processes: ShiphookProcess[]): void {
  for (const p of processes) expect({ pid: p.child.pid, exitCode: p.child.exitCode, signal: p.child.signalCode }).toEqual({ pid: p.child.pid, exitCode: null, signal: null });
}

/** Kills a child with SIGKILL and waits until it is gone. */
export async function killHard(p: ShiphookProcess): Promise<void> {
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGKILL');
  await exited;
  expect(p.child.signalCode).toBe('SIGKILL');
}

/** One line per fault with what the test observed, for the README's fault table. */
export function report(fault: string, observed: Record<string, unknown>): void {
  process.stdout.write(`FAULT ${fault} ${JSON.stringify(observed)}\n`);
}

/** An authenticated read through an api process (its key cache listening again after a database restart). */
export async function authenticatedRead(sys: TestSystem, key: string): Promise<number> {
  return (await call(sys, 'GET', '/webhooks', { key })).status;
}
