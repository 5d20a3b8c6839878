import { proxyActivities, proxyLocalActivities, sleep, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { AttemptResult } from '../activities/delivery';
import { EventStatusAttr } from '../src/temporal/search-attributes';

export interface DeliveryTarget {
  webhookId: string;
  /** Masked, for operators reading the history. */
  url: string;
}

export interface DeliverEventInput {
  eventId: string;
  /** The deliveries still pending when the run was started (read by the starter). */
  targets: DeliveryTarget[];
  /** Waits between attempts; attempts per URL = delays + 1. Fixed at start, so visible in the UI. */
  retryDelaysMs: number[];
  /** Bounds one HTTP attempt; the activity gets that plus room for SQL. */
  attemptTimeoutMs: number;
}

const JITTER = 0.2;
/** Infrastructure errors only (the database unreachable): HTTP outcomes are results, not errors. */
const INFRASTRUCTURE_RETRY = { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 } as const;

/**
 * Delivers one Event to every pending webhook URL.
 *
 * Attempt 1 goes to every URL at once as a local activity: it runs inside the
 * first workflow task, so the POSTs leave without another round trip to the
 * server, and an event whose endpoints all answer 2XX completes in that one task.
 * Each URL that failed then retries on its own: a durable timer, then an attempt
 * activity for that URL alone, so one failing endpoint never holds the others
 * back and every retry, its masked URL and outcome are visible in the UI.
 *
 * History stays bounded: the first attempt is one marker; each retry is ~6 events
 * (timer started/fired, activity scheduled/started/completed), so 100 webhooks ×
 * 7 retries stay near 4,000 events, well inside Temporal's 50K limit. Retry policies
 * would add no history per attempt but hide the attempts and cannot express a
 * per-attempt schedule with Retry-After; here they only cover infrastructure errors.
 */
export async function deliverEvent(input: DeliverEventInput): Promise<string | undefined> {
  const { eventId, targets, retryDelaysMs } = input;
  const lastAttempt = retryDelaysMs.length + 1;
  let lastStatus = workflowInfo().typedSearchAttributes.get(EventStatusAttr);
  const seen = (result: AttemptResult) => {
    if (result.status === lastStatus) return;
    lastStatus = result.status;
    upsertSearchAttributes([{ key: EventStatusAttr, value: result.status }]);
  };

  const activityTimeout = input.attemptTimeoutMs + 10_000; // HTTP plus room for SQL and the health report
  let retries: { target: DeliveryTarget; from: number; retryAfterMs?: number }[];
  try {
    const { attemptDeliveries } = proxyLocalActivities<Activities>({
      startToCloseTimeout: activityTimeout,
      retry: INFRASTRUCTURE_RETRY,
      summary: `attempt 1: POST to ${targets.length} webhook${targets.length === 1 ? '' : 's'}`,
    });
    const first = await attemptDeliveries({ eventId, targets, attempt: 1, final: lastAttempt === 1 });
    seen(first);
    retries = first.outcomes.flatMap((o) => {
      const target = targets.find((t) => t.webhookId === o.webhookId);
      return o.outcome === 'failed' && target && lastAttempt > 1 ? [{ target, from: 2, retryAfterMs: o.retryAfterMs }] : [];
    });
  } catch {
    // The fast path gave up (the database stayed unreachable through its retries):
    // every URL goes through regular activities, which the server retries with backoff.
    retries = targets.map((target) => ({ target, from: 1 }));
  }

  await Promise.all(
    retries.map(async ({ target, from, retryAfterMs }) => {
      const { attemptDeliveries } = proxyActivities<Activities>({
        // Also how soon an attempt lost with a dead worker is tried again.
        startToCloseTimeout: activityTimeout,
        retry: INFRASTRUCTURE_RETRY,
        summary: `POST ${target.url}`,
      });
      for (let attempt = from; attempt <= lastAttempt; attempt++) {
        if (attempt > 1) {
          const planned = retryDelaysMs[attempt - 2]!;
          const jittered = planned * (1 - JITTER + Math.random() * 2 * JITTER); // deterministic in workflows
          await sleep(Math.max(jittered, retryAfterMs ?? 0));
        }
        const result = await attemptDeliveries({ eventId, targets: [target], attempt, final: attempt === lastAttempt });
        seen(result);
        const outcome = result.outcomes[0];
        if (outcome?.outcome !== 'failed') return;
        retryAfterMs = outcome.retryAfterMs;
      }
    }),
  );

  // Every attempt returned the event status as of its own (serialised) update, so the
  // status the last one saw is the final one: no extra round trip to read it.
  return lastStatus;
}
