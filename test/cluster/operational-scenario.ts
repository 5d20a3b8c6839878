import { sql } from 'kysely';
import { PLATFORM_USER_ID } from '../../src/account/platform-user';
import { webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { startReceiver, status } from '../support/receiver';
import { TEST_ENV } from '../support/test-config';
import { until } from '../fault/harness';
import type { Cluster, ClusterProcess } from './cluster';

/** Events of the scenario, all refused by their one endpoint: each ends with its delivery exhausted. */
const EVENTS = 60;
const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };

/** What the operational scenario saw: the operational events emitted and received about its webhook. */
export interface OperationalOutcome {
  events: number;
  failed: number;
  /** Emitted (Events of the platform user), by type. */
  emitted: Record<string, number>;
  /** Customer events named by a `delivery.exhausted`, and those named more than once. */
  exhaustedEvents: number;
  exhaustedTwice: number;
  /** Distinct operational events the operator's endpoint received. */
  received: number;
  /** POSTs the refusing endpoint got: beyond four per event, attempts the victims made and their replacements made again. */
  attempts: number;
  seconds: number;
}

/**
 * An operator's endpoint for `webhook.failing` and `delivery.exhausted`; an account whose one
 * webhook refuses everything; EVENTS events published through both apis; `victims` killed
 * (SIGKILL) once the endpoint has failed a third of its attempts, mid-retries, and started
 * again. Waits until every event failed and every exhaustion reached the operator.
 */
export async function operationalScenario(cluster: Cluster, victims: ClusterProcess[], timeoutMs: number): Promise<OperationalOutcome> {
  const started = Date.now();
  const [operator, refusing] = [await startReceiver(), await startReceiver(status(500))];
  const api = cluster.apis[0]!.sys;
  const endpoint = await call(api, 'POST', '/admin/v1/operational_webhooks', { headers: ADMIN, body: { url: operator.url, event_types: ['webhook.failing', 'delivery.exhausted'] } });
  if (endpoint.status !== 201) throw new Error(`operational webhook: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);
  try {
    const account = await createAccount(api);
    const hook = await webhook(api, account.testKey, refusing.url);
    for (let batch = 0; batch < EVENTS / 20; batch++) {
      const events = Array.from({ length: 20 }, (_, i) => ({ user_id: account.user.id, mode: 'test', description: 'tracker.updated', result: { id: `trk_${batch}_${i}`, object: 'Tracker' } }));
      const res = await call(cluster.apis[batch % cluster.apis.length]!.sys, 'POST', '/admin/v1/events/batch', { headers: ADMIN, body: { events } });
      if (res.status !== 201) throw new Error(`publishing answered ${res.status}`);
    }
    const attempts = EVENTS * 4; // CLUSTER_ENV: three retry delays
    await until(() => refusing.deliveries.length >= attempts / 3, timeoutMs, 'a third of the attempts made');
    await Promise.all(victims.map((p) => p.kill()));
    await Promise.all(victims.map((p) => p.restart()));

    const count = async () => {
      const { rows: events } = await sql<{ status: string; n: number }>`select status, count(*)::int as n from events where user_id = ${account.user.id} group by 1`.execute(cluster.db);
      const { rows: emitted } = await sql<{ description: string; n: number; distinct_events: number }>`
        select description, count(*)::int as n, count(distinct result->>'event_id')::int as distinct_events
        from events where user_id = ${PLATFORM_USER_ID} and result->>'id' = ${hook.id} group by 1`.execute(cluster.db);
      const exhausted = emitted.find((r) => r.description === 'delivery.exhausted');
      return {
        events: events.reduce((n, r) => n + r.n, 0),
        failed: events.find((r) => r.status === 'failed')?.n ?? 0,
        emitted: Object.fromEntries(emitted.map((r) => [r.description, r.n])),
        exhaustedEvents: exhausted?.distinct_events ?? 0,
        exhaustedTwice: (exhausted?.n ?? 0) - (exhausted?.distinct_events ?? 0),
        received: new Set(operator.deliveries.map((d) => d.json?.id)).size,
        attempts: refusing.deliveries.length,
      };
    };
    let outcome = await count();
    await until(async () => {
      outcome = await count();
      return outcome.failed === EVENTS && outcome.exhaustedEvents === EVENTS && outcome.received >= EVENTS + 1;
    }, timeoutMs, 'every event failed and every exhaustion received').catch(() => undefined);
    return { ...outcome, seconds: Math.round((Date.now() - started) / 1000) };
  } finally {
    await call(api, 'DELETE', `/admin/v1/operational_webhooks/${endpoint.body.id}`, { headers: ADMIN });
    await Promise.all([operator.close(), refusing.close()]);
  }
}
