import { ActivityFailure, ApplicationFailure, proxyActivities, proxyLocalActivities, setCurrentDetails, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { type AttemptResult, type DeliverEvent, type DeliveryPause, type DeliveryTarget, EventStatusAttr, type EventStatus } from '../src/engine/contract';
import { deliveryPauses, isPause } from './delivery-pauses';

/**
 * A wait before a retry up to this long is spent in the retry activity itself
 * (scheduled at once, it sleeps until its time): a durable timer would cost the
 * server a timer and the worker a second workflow task for every failing URL
 * (the production schedule's first retry is that short: config.ts). Longer waits are timers.
 */
export const WAIT_IN_ACTIVITY_MAX_MS = 15_000;

/**
 * A first retry due this soon, to an endpoint that answered (an error status, not a timeout or
 * a connection failure), is made in the task of attempt 1, as a local activity that waits for
 * its time: no activity task, so none of the server's writes for one (its start, its failure)
 * while a failing endpoint fails; the task stays well within the server's workflow task
 * timeout. A timeout keeps to the retry activity, which would hold the task too long. The worker
 * takes a share of its task slots for these (activities/deliver.ts); one beyond it is refused, and
 * goes to the retry activity at the same time.
 */
const RETRY_IN_TASK_MAX_MS = 7_000;
const retriesInTask = (o: { retryInMs: number; responseCode: number }) => o.retryInMs <= RETRY_IN_TASK_MAX_MS && o.responseCode >= 100;

/**
 * The wait before a failed attempt's next one, from this task's time. Workflow time stands
 * still while the task's local activities run, so the wait counts from the answer (`retryAt`),
 * not from the task's start: a Retry-After is never undercut by the attempt's own duration.
 */
const waitFor = (o: { retryAt: number }) => Math.max(0, o.retryAt - Date.now());

/** Infrastructure errors only (the database unreachable): HTTP outcomes are results, not errors. */
const INFRASTRUCTURE_RETRY = { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 } as const;

/**
 * The status a run holds after an activity reported `reported`. Each activity reports
 * the event's status as of its own database update, and the retries of several URLs
 * run in parallel, so their reports can arrive out of order: a final status (every URL
 * done) is never replaced by an earlier, not-final report that arrives after it.
 */
export function laterStatus(held: EventStatus | undefined, reported: EventStatus): EventStatus {
  const final = (s: EventStatus | undefined) => s === 'completed' || s === 'failed';
  return final(held) && !final(reported) ? held! : reported;
}

/**
 * Delivers one Event to every pending webhook URL.
 *
 * Attempt 1 goes to every URL at once as a local activity: it runs inside the
 * first workflow task, so the POSTs leave without another round trip to the
 * server, and an event whose endpoints all answer 2XX completes in that one task.
 *
 * Each URL that failed gets one `retryDelivery` activity, after a durable timer when
 * the first retry is more than WAIT_IN_ACTIVITY_MAX_MS away (otherwise the activity
 * waits), whose later attempts the server schedules: the activity fails with the
 * next delay of the schedule (or a longer Retry-After) and Temporal retries it then.
 * Retried activity attempts add no history, so a failing URL costs the same few
 * history events and one more workflow task however many attempts it takes, one
 * failing endpoint never holds the others back, and the UI shows each pending
 * attempt with its count, last failure and next retry time (every attempt's
 * request and response are Payloads in the API). Attempts are numbered by what the
 * database recorded as sent, so infrastructure errors never use one up. The activity's
 * Temporal attempts are limited to the schedule's remaining ones (the UI shows
 * "Attempt k / n", its summary which delivery attempts those are); if infrastructure
 * errors used some of them, the workflow schedules it once more (see below).
 *
 * A delivery its webhook's rate limit or order per object held back (no attempt used) waits
 * in the run (./delivery-pauses.ts), then gets its activity as a retry does.
 */
export const deliverEvent: DeliverEvent = async (input) => {
  const { eventId, targets, retryDelaysMs } = input;
  // ShiphookEventStatus holds an event's outcome, set when the run reaches one: a run
  // whose first attempt delivers to every URL closes Completed without it, and a run
  // still retrying is Running without it. Each upsert is a history event (its visibility write rides
  // on the one the server makes anyway after a first task that leaves the run open, when
  // it adds the worker's build id to BuildIds).
  let result: EventStatus | undefined;
  let upserted: EventStatus | undefined;
  let retried = false;
  const seen = (attempt: AttemptResult) => {
    result = laterStatus(result, attempt.status);
    if (attempt.status === 'retrying' || attempt.status === 'in_queue') {
      retried = true;
      return;
    }
    if (attempt.status === upserted || (attempt.status === 'completed' && upserted === undefined && !retried)) return;
    upserted = attempt.status;
    upsertSearchAttributes([{ key: EventStatusAttr, value: attempt.status }]);
  };

  const pauses = deliveryPauses();
  const activityTimeout = input.attemptTimeoutMs + 10_000; // HTTP plus room for SQL and the health report
  /** `from`: the delivery attempt the retries start with; `pause`: why it was held back instead. */
  let retries: { target: DeliveryTarget; waitMs: number; from: number; pause?: DeliveryPause; inTask?: boolean }[];
  let passing: Promise<void> = Promise.resolve();
  try {
    const { attemptDeliveries } = proxyLocalActivities<Activities>({
      startToCloseTimeout: activityTimeout,
      retry: INFRASTRUCTURE_RETRY,
      summary: `attempt 1: POST to ${targets.length} webhook${targets.length === 1 ? '' : 's'}`,
    });
    const first = await attemptDeliveries({ eventId, targets, retryDelaysMs });
    seen(first);
    passing = pauses.passTurns(first);
    retries = first.outcomes.flatMap((o): typeof retries => {
      const target = targets.find((t) => t.webhookId === o.webhookId);
      if (!target) return [];
      if (isPause(o)) return [{ target, waitMs: 0, from: o.attempt, pause: o }];
      return o.outcome === 'retry' ? [{ target, waitMs: waitFor(o), from: o.attempt + 1, inTask: retriesInTask(o) }] : [];
    });
  } catch {
    // The fast path gave up (the database stayed unreachable through its retries):
    // every URL goes to a regular activity, which the server retries with backoff.
    retries = targets.map((target) => ({ target, waitMs: 0, from: 1 }));
  }

  const total = retryDelaysMs.length + 1;
  /**
   * The attempts `from`..`total` to one target: one activity whose Temporal attempts
   * are those delivery attempts, so the UI shows "Attempt k / total - from + 1" with
   * the summary naming the delivery's numbers. `limited: false`: the schedule's end
   * is left to the activity (it returns on the last attempt).
   */
  const attemptsTo = async (target: DeliveryTarget, waitMs: number, from: number, limited: boolean) => {
    const waitInActivity = waitMs > 0 && waitMs <= WAIT_IN_ACTIVITY_MAX_MS;
    const { retryDelivery } = proxyActivities<Activities>({
      // Its own task queue: workers can serve it at a lower priority than first attempts.
      taskQueue: input.retryTaskQueue,
      // Per attempt; also how soon an attempt lost with a dead worker is tried again.
      startToCloseTimeout: activityTimeout + (waitInActivity ? waitMs : 0),
      // Delivery failures set their own delay (nextRetryDelay); this backoff is for
      // infrastructure errors.
      retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2, ...(limited ? { maximumAttempts: total - from + 1 } : {}) },
      // Short: a URL may be 2,048 characters, and the UI shows this on one line.
      summary: `${limited ? `attempts ${from}–${total} of ${total}` : `attempts after infrastructure errors, up to ${total}`}: POST ${target.url.length > 120 ? target.url.slice(0, 119) + '…' : target.url}`,
    });
    if (waitMs > 0 && !waitInActivity) await sleep(waitMs);
    // Workflow time (that of this task): the same on replay.
    const notBefore = waitInActivity ? Date.now() + waitMs : undefined;
    return retryDelivery({ eventId, target, retryDelaysMs, ...(notBefore ? { notBefore } : {}) });
  };

  /**
   * A held-back delivery's attempt once it may go: a local activity, as attempt 1 is (it is
   * the delivery's first attempt, or the next of its schedule), in the task that its timer or
   * its turn signal woke; `slotAt`: the rate-limit slot it was given, which it waits for.
   */
  const attemptNow = (target: DeliveryTarget, attempt: number, slotAt: number | undefined, waitMs = 0) => {
    const { attemptDeliveries } = proxyLocalActivities<Activities>({
      startToCloseTimeout: activityTimeout + waitMs,
      retry: INFRASTRUCTURE_RETRY,
      summary: `attempt ${attempt} of ${total}${slotAt ? ' at its rate-limit slot' : ''}: POST ${target.url.length > 120 ? target.url.slice(0, 119) + '…' : target.url}`,
    });
    // Workflow time (that of this task): the same on replay.
    const notBefore = waitMs > 0 ? Date.now() + waitMs : undefined;
    return attemptDeliveries({ eventId, targets: [target], retryDelaysMs, ...(slotAt ? { slot: { webhookId: target.webhookId, at: slotAt } } : {}), ...(notBefore ? { notBefore } : {}) });
  };

  /** The attempts to one target; `pause`: it was held back, and waits first; `inTask`: its first retry is made in this task. */
  const deliverTo = async (target: DeliveryTarget, waitMs: number, from: number, pause?: DeliveryPause, inTask = false) => {
    for (;;) {
      let result: AttemptResult;
      const madeInTask = inTask;
      if (inTask) {
        inTask = false;
        const due = Date.now() + waitMs;
        try {
          result = await attemptNow(target, from, undefined, waitMs);
        } catch {
          // The worker's share of retries in tasks was taken, or the database stayed unreachable
          // through the local activity's retries: the retry activity takes over, at the same time.
          waitMs = Math.max(0, due - Date.now());
          continue;
        }
      } else if (pause) {
        const slotAt = await pauses.waitOut(pause, target);
        try {
          result = await attemptNow(target, pause.attempt, slotAt);
        } catch {
          // The database stayed unreachable through the local activity's retries: a regular activity takes over.
          [pause, waitMs, from] = [undefined, 0, pause.attempt];
          continue;
        }
      } else {
        try {
          result = await attemptsTo(target, waitMs, from, true);
        } catch (err) {
          // The activity returns on the schedule's last attempt, so its Temporal attempts ran
          // out only when some of them sent nothing (the database unreachable, a lost worker).
          // The delivery's remaining attempts get one more activity, without a limit: the
          // history grows by one activity per URL at most.
          if (!(err instanceof ActivityFailure)) throw err;
          const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
          const nextWait = typeof cause?.details?.[0] === 'number' ? cause.details[0] : 0;
          result = await attemptsTo(target, nextWait, from, false);
        }
      }
      seen(result);
      await pauses.passTurns(result);
      const outcome = result.outcomes[0];
      if (isPause(outcome)) {
        // Held back (again): its turn was taken meanwhile, or a slot is far off.
        pause = outcome;
      } else if (outcome?.outcome === 'retry' && (pause || madeInTask)) {
        // Its attempt (held back, or the first retry made in this task) failed: the rest of the schedule.
        [pause, waitMs, from] = [undefined, waitFor(outcome), outcome.attempt + 1];
      } else {
        return;
      }
    }
  };

  await Promise.all([passing, ...retries.map(({ target, waitMs, from, pause, inTask }) => deliverTo(target, waitMs, from, pause, inTask))]);

  // Every attempt returned the event status as of its own (serialised) update, and the
  // update that finished the last URL saw the final one (laterStatus keeps it against
  // reports that arrive after it): no extra round trip to read it.
  if (result === 'failed') await awaitReplay(input.retainedUntil);
  return result;
};

/**
 * A failed event's run does not close: it stays Running with `ShiphookEventStatus =
 * 'failed'` until retention removes the event, so `ExecutionStatus = 'Running'` lists
 * what is failing now. A replay or recovery starts the next run of this workflow id,
 * which terminates this one with a reason naming it (src/engine/replaced-run.ts): a
 * delivered event is then listed no more, and the UI shows the old run Terminated beside
 * the new one's outcome. A timer, no activity: in the worker's cache only until evicted.
 */
async function awaitReplay(retainedUntil: number): Promise<void> {
  setCurrentDetails('**Failed**: a URL ran out of attempts, answered 410 Gone, or its webhook was disabled. Replay the event or recover the webhook to deliver it: that replaces this run.');
  const left = retainedUntil - Date.now();
  if (left > 0) await sleep(left, { summary: 'failed: waits for a replay or recovery until retention removes the event' });
}
