import { Counter, Histogram } from 'prom-client';

/**
 * Delivery metrics, counted in the worker process where attempts run. Labels are
 * small fixed sets: an outcome class and an attempt-number bucket, never a URL,
 * webhook, event or user id.
 */

/** What one attempt came to: the response's status class, or why there was none. */
export type AttemptOutcome = '2xx' | '3xx' | '4xx' | '5xx' | 'timeout' | 'network' | 'refused';

const attempts = new Counter({
  name: 'shiphook_delivery_attempts_total',
  help: 'Delivery attempts (one POST to one webhook URL), by outcome (2xx, 3xx, 4xx, 5xx, timeout, network, refused by the address check) and attempt number (1, 2, 3, 4+).',
  labelNames: ['outcome', 'attempt'] as const,
});

const attemptDuration = new Histogram({
  name: 'shiphook_delivery_attempt_duration_seconds',
  help: 'Time one delivery attempt took, from sending the request to reading the answer (or giving up), by outcome.',
  labelNames: ['outcome'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
});

const publishToFirstAttempt = new Histogram({
  name: 'shiphook_publish_to_first_attempt_seconds',
  help: "Time from an event's publication (its created_at) to sending its first attempt to a webhook URL, once per URL.",
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
});

const eventsFinished = new Counter({
  name: 'shiphook_events_finished_total',
  help: 'Events that reached a final status (completed: every URL acknowledged; failed: some URL gave up), by status.',
  labelNames: ['status'] as const,
});

const webhooksDisabled = new Counter({
  name: 'shiphook_webhook_disable_actions_total',
  help: 'Webhooks disabled by the delivery engine, by reason (gone: the endpoint answered 410; failing: sustained failures).',
  labelNames: ['reason'] as const,
});

const dispatcherClaims = new Counter({
  name: 'shiphook_dispatcher_claimed_events_total',
  help: 'Published events claimed by the outbox dispatcher to start their delivery workflows.',
});

const dispatchStartFailures = new Counter({
  name: 'shiphook_dispatch_start_failures_total',
  help: 'Delivery workflow starts that failed: transient (Temporal unreachable or slow; tried again on the next pass) or incident (refused for good; the event is marked for an operator to replay).',
  labelNames: ['kind'] as const,
});

// Every known series starts at 0, so a first failure shows in rate() and on the dashboard.
const OUTCOMES: AttemptOutcome[] = ['2xx', '3xx', '4xx', '5xx', 'timeout', 'network', 'refused'];
for (const outcome of OUTCOMES) {
  attemptDuration.zero({ outcome });
  for (const attempt of ['1', '2', '3', '4+']) attempts.inc({ outcome, attempt }, 0);
}
for (const status of ['completed', 'failed']) eventsFinished.inc({ status }, 0);
for (const reason of ['gone', 'failing']) webhooksDisabled.inc({ reason }, 0);
for (const kind of ['transient', 'incident']) dispatchStartFailures.inc({ kind }, 0);

/** The outcome class of an attempt: a status code, or for no answer, why (`refused` = the address guard). */
export function attemptOutcome(status: number, error: string | undefined, refused: boolean): AttemptOutcome {
  if (refused) return 'refused';
  if (status >= 200 && status < 600) return `${Math.floor(status / 100)}xx` as AttemptOutcome;
  return error && /timed? ?out/i.test(error) ? 'timeout' : 'network';
}

const attemptBucket = (attempt: number) => (attempt >= 4 ? '4+' : String(attempt));

export const deliveryMetrics = {
  attempt(outcome: AttemptOutcome, attempt: number, seconds: number): void {
    attempts.inc({ outcome, attempt: attemptBucket(attempt) });
    attemptDuration.observe({ outcome }, seconds);
  },
  firstAttemptSent(publishedAt: Date): void {
    publishToFirstAttempt.observe(Math.max(0, (Date.now() - publishedAt.getTime()) / 1000));
  },
  eventFinished(status: 'completed' | 'failed', count = 1): void {
    if (count) eventsFinished.inc({ status }, count);
  },
  webhookDisabled(reason: 'gone' | 'failing'): void {
    webhooksDisabled.inc({ reason });
  },
  claimed(count: number): void {
    dispatcherClaims.inc(count);
  },
  startsFailed(kind: 'transient' | 'incident', count: number): void {
    if (count) dispatchStartFailures.inc({ kind }, count);
  },
};
