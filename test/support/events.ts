import { EventStatusAttr } from '../../src/engine/contract';
import { call } from './http';
import type { TestSystem } from './system';
import { TEST_ENV } from './test-config';
import { eventually } from './receiver';

const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };

/** Publishes an event through the operator API. */
export async function publish(sys: TestSystem, userId: string, mode: 'test' | 'production', extra: Record<string, unknown> = {}) {
  const res = await call(sys, 'POST', '/admin/v1/events', {
    headers: ADMIN,
    body: {
      user_id: userId,
      mode,
      description: 'tracker.updated',
      result: { id: 'trk_0123', object: 'Tracker', status: 'in_transit', weight: 15 },
      previous_attributes: { status: 'pre_transit' },
      ...extra,
    },
  });
  if (res.status !== 201) throw new Error(`publish failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function webhook(sys: TestSystem, key: string, url: string, extra: Record<string, unknown> = {}) {
  const res = await call(sys, 'POST', '/webhooks', { key, body: { webhook: { url, ...extra } } });
  if (res.status !== 201) throw new Error(`webhook creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Waits until the event has the given status (as seen through the API). */
export async function eventStatus(sys: TestSystem, key: string, eventId: string, want: string, timeoutMs = 20_000) {
  return eventually(async () => {
    const res = await call(sys, 'GET', `/events/${eventId}`, { key });
    return res.body?.status === want ? res.body : undefined;
  }, timeoutMs, `event ${eventId} to be ${want}`);
}

/**
 * Waits until the event's latest run has nothing more to do, so nothing more can arrive
 * from it: closed, or (its event failed) waiting for a replay (workflows/deliver-event.ts).
 */
export async function runSettled(sys: TestSystem, eventId: string, timeoutMs = 30_000) {
  const handle = (await sys.temporal()).workflow.getHandle(eventId);
  return eventually(async () => {
    const d = await handle.describe().catch(() => undefined);
    if (!d) return undefined;
    const waitsForReplay = d.typedSearchAttributes.get(EventStatusAttr) === 'failed' && !d.raw.pendingActivities?.length;
    return d.status.name !== 'RUNNING' || waitsForReplay ? d : undefined;
  }, timeoutMs, `the run of ${eventId} to settle`);
}

/** When a dispatcher marked the event dispatched (its workflow started), or null while it waits in the outbox. */
export async function dispatchedAt(sys: TestSystem, eventId: string) {
  return (await sys.db.selectFrom('events').select('dispatched_at').where('id', '=', eventId).executeTakeFirstOrThrow()).dispatched_at;
}

/**
 * Waits until a webhook whose event failed is disabled, by the suite's health policy (four
 * failures over more than a second) or by a 410: the disable may land after the event's status
 * says failed, so a re-enable or a recovery before it could be undone or stopped by it.
 */
export async function untilDisabled(sys: TestSystem, key: string, webhookId: string, timeoutMs = 20_000) {
  return eventually(async () => {
    const res = await call(sys, 'GET', `/webhooks/${webhookId}`, { key });
    return res.body?.disabled_at ? res.body : undefined;
  }, timeoutMs, `webhook ${webhookId} to be disabled`);
}
