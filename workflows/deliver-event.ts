import { proxyActivities, sleep, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { EventStatusAttr, WebhookUrlsAttr } from '../src/temporal/search-attributes';

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
  /** Bounds one HTTP attempt; the activity gets twice that plus room for SQL. */
  attemptTimeoutMs: number;
}

const JITTER = 0.2;

/**
 * Delivers one Event to every pending webhook URL, in parallel. The starter passes
 * the targets, so the first attempts go out without another round trip.
 *
 * Each attempt is one activity; the waits between attempts are durable timers
 * here, not activity retries. Per URL and attempt that is ~6 history events
 * (activity scheduled/started/completed, timer started/fired), so 100 webhooks ×
 * 8 attempts stay near 5,000 events — well inside Temporal's 50K limit — while
 * every attempt, its masked target URL and its outcome are visible in the UI.
 * (Retry policies would add no history per attempt but hide the attempts, and
 * cannot express a per-attempt schedule with Retry-After.) The activity's own
 * retry policy only covers infrastructure errors (database down), not HTTP outcomes.
 */
export async function deliverEvent(input: DeliverEventInput): Promise<string | undefined> {
  const { targets } = input;
  upsertSearchAttributes([{ key: WebhookUrlsAttr, value: targets.map((t) => t.url) }]);
  let lastStatus = workflowInfo().typedSearchAttributes.get(EventStatusAttr);
  const setStatus = (status: string) => {
    if (status === lastStatus) return;
    lastStatus = status;
    upsertSearchAttributes([{ key: EventStatusAttr, value: status }]);
  };

  await Promise.all(
    targets.map(async (target) => {
      const { attemptDelivery } = proxyActivities<Activities>({
        // The attempt bounds its own HTTP time; this adds room for SQL and the health
        // report, and is how soon an attempt lost with a dead worker is tried again.
        startToCloseTimeout: 2 * input.attemptTimeoutMs + 10_000,
        retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
        summary: `POST ${target.url}`,
      });
      for (let attempt = 1; ; attempt++) {
        const final = attempt > input.retryDelaysMs.length;
        const result = await attemptDelivery({ eventId: input.eventId, webhookId: target.webhookId, url: target.url, attempt, final });
        setStatus(result.status);
        if (result.outcome !== 'failed' || final) return;
        const planned = input.retryDelaysMs[attempt - 1]!;
        const jittered = planned * (1 - JITTER + Math.random() * 2 * JITTER); // deterministic in workflows
        await sleep(Math.max(jittered, result.retryAfterMs ?? 0));
      }
    }),
  );

  // Every attempt returned the event status as of its own (serialised) update, so the
  // status the last one saw is the final one: no extra round trip to read it.
  return lastStatus;
}
