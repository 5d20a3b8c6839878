import type { Mode } from '../account/tables';
import type { Db } from '../db/database';
import { ApiError } from '../errors/api-error';
import { isoSeconds } from '../format';
import type { EventType } from '../events/types';
import { publishEvent } from '../events/publish';
import { EVENT_RESULTS } from '../events/catalogue/results';
import type { Principal } from '../account/principal';
import { ownWebhook } from './webhooks';

/**
 * Test events ("send test webhook"): the event catalogue's example of a chosen type
 * (src/events/catalogue) delivered to one webhook only, through the same outbox,
 * workflow and attempt log as every event, so it can be inspected and replayed like
 * one. Receivers see `X-Shiphook-Test: true` (a header customers cannot set: the brand
 * prefix is reserved).
 */
export const DEFAULT_TEST_EVENT: EventType = 'tracker.updated';

/**
 * What a test event of `type` carries: the example's `result` and `previous_attributes`
 * as the catalogue has them (ids and tracking codes included), but for what is fresh
 * per send — the result's `mode` (the caller's) and its `updated_at` (now), with
 * `created_at` as long before it as in the example. The Event around it is new, as
 * every event is (its id, status and timestamps).
 */
export function testEventOf(type: EventType, mode: Mode, now: Date) {
  const { result, previous_attributes } = EVENT_RESULTS[type].example;
  const age = Date.parse(String(result.updated_at)) - Date.parse(String(result.created_at));
  return {
    result: { ...structuredClone(result), mode, created_at: isoSeconds(new Date(now.getTime() - age)), updated_at: isoSeconds(now) },
    previousAttributes: structuredClone(previous_attributes),
  };
}

/** POST /webhooks/:id/test `{description?}` → the Event as it is delivered (with `result`). */
export async function sendTestEvent(db: Db, who: Principal, webhookId: string, description: EventType = DEFAULT_TEST_EVENT) {
  const hook = await ownWebhook(db, who, webhookId);
  if (hook.disabled_at) {
    throw new ApiError('WEBHOOK.INVALID', 'The webhook is disabled; update it to re-enable it, then send a test event.', [{ field: 'id', message: 'webhook is disabled' }]);
  }
  return publishEvent(db, {
    userId: who.user.id,
    mode: who.mode,
    description,
    ...testEventOf(description, who.mode, new Date()),
    test: { webhookId: hook.id },
  });
}
