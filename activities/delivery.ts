import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { Config } from '../src/config';
import type { Db } from '../src/db/database';
import { log, withLogContext } from '../src/log';
import { attemptOutcome, deliveryMetrics } from '../src/metrics/delivery';
import { type AttemptRecord, type DeliveryWithWebhook, loadAttempt, type Recorded, recordAttempts } from '../src/events/deliveries';
import { eventDelivery } from '../src/events/events';
import { deliveryBody, signedRequest } from '../src/engine/signed-request';
import { disableIfSustained, disableWebhook, type FailureRun, type HealthVerdict, recordFailure, recordSuccess } from '../src/webhooks/webhooks';
import { createHttpClient, type SendResult } from '../src/outbound/http-client';
import type { AttemptInput, AttemptResult, RetryInput, TargetOutcome } from '../src/engine/contract';

/**
 * How activities tell a webhook's long-lived health workflow that a run of failures
 * started at `since`, or that it ended (the engine signals it, starting it if need be).
 */
export interface HealthSignals {
  failing(webhookId: string, since: Date): Promise<void>;
  recovered(webhookId: string): Promise<void>;
}

export interface DeliveryDeps {
  config: Config;
  db: Db;
  health: HealthSignals;
}

const JITTER = 0.2;
const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;
/** Outcomes that arrive within this long of each other are recorded in one transaction. */
const GATHER_MS = 100;

export function createDeliveryActivities({ config, db, health }: DeliveryDeps) {
  // Every POST leaves through this client: its connections resolve, check and pin the address.
  const http = createHttpClient({ ...config.webhooks, timeoutMs: config.attemptTimeoutMs });

  /** One POST to one target; its outcome goes to the recorder as soon as the answer is in. */
  async function attemptOne(eventId: string, body: string, delivery: DeliveryWithWebhook, retryDelaysMs: number[], record: (r: AttemptRecord) => void, test: boolean): Promise<TargetOutcome> {
    const { webhookId } = delivery;
    const hook = delivery.webhook;
    if (!hook || hook.deletedAt || hook.disabledAt) {
      record({ webhookId, before: delivery, state: 'failed' });
      return { webhookId, outcome: 'stopped', reason: !hook || hook.deletedAt ? 'webhook deleted' : 'webhook disabled' };
    }
    // Numbered by the attempts actually sent: an activity retried after an
    // infrastructure error (nothing recorded) does not use up an attempt.
    const attempt = delivery.attempts + 1;
    const final = attempt > retryDelaysMs.length;
    const request = signedRequest({ id: eventId, body, test }, { ...hook, url: delivery.url }, { sentAt: new Date() });
    const result = await http.post(request.url, request.headers, request.body);
    const measured = attemptOutcome(result.status, result.error, result.reason === 'ADDRESS_REFUSED' || result.reason === 'HTTP_REFUSED');
    deliveryMetrics.attempt(measured, attempt, result.totalTimeMs / 1000);
    log.debug('delivery attempt', { event_id: eventId, webhook_id: webhookId, attempt, outcome: measured, ms: result.totalTimeMs });
    const ok = result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    record({
      webhookId,
      before: delivery,
      state: ok ? 'completed' : gone || final ? 'failed' : 'pending',
      payload: {
        eventId,
        webhookId,
        requestUrl: request.logged.url,
        requestHeaders: request.logged.headers,
        requestBody: request.body,
        responseCode: result.status,
        responseHeaders: result.headers,
        responseBody: result.error ? `shiphook: ${result.error}` : result.body,
        totalTime: result.totalTimeMs,
      },
    });
    if (ok) return { webhookId, outcome: 'delivered' };
    if (gone) return { webhookId, outcome: 'stopped', reason: '410 Gone: webhook disabled', gone: true };
    if (final) return { webhookId, outcome: 'failed', attempt, responseCode: result.status };
    const planned = retryDelaysMs[attempt - 1]! * (1 - JITTER + Math.random() * 2 * JITTER);
    return { webhookId, outcome: 'retry', attempt, responseCode: result.status, retryInMs: Math.round(Math.max(planned, retryAfter(result) ?? 0)) };
  }

  /**
   * What an outcome means for the webhook's health: the run of failures (counted
   * here unless recording the attempt counted it: `counted`), 410.
   */
  async function followUp(outcome: TargetOutcome, delivery: DeliveryWithWebhook | undefined, counted: Map<string, FailureRun>): Promise<void> {
    const { webhookId } = outcome;
    if (outcome.outcome === 'delivered') {
      if (delivery?.webhook?.failingSince && (await recordSuccess(db, webhookId))) await health.recovered(webhookId);
    } else if (outcome.outcome === 'retry' || outcome.outcome === 'failed') {
      const run = counted.get(webhookId) ?? (await recordFailure(db, webhookId, new Date()));
      if (run && repeatsHealthSignal(run.consecutiveFailures, config.disableAfterFailures)) {
        await health.failing(webhookId, run.failingSince);
      }
    } else if (outcome.outcome === 'stopped' && outcome.gone) {
      if (await disableWebhook(db, webhookId, new Date())) deliveryMetrics.webhookDisabled('gone');
    }
  }

  /**
   * One attempt of one event to some of its webhooks, in parallel: all of them for
   * the first attempt (run as a local activity), one for each retry.
   */
  async function attemptDeliveries(input: AttemptInput): Promise<AttemptResult> {
    const ctx = await loadAttempt(db, input.eventId);
    if (!ctx) {
      return { status: 'failed', outcomes: input.targets.map((t) => ({ webhookId: t.webhookId, outcome: 'stopped', reason: 'event not found' })) };
    }
    const body = deliveryBody(eventDelivery(ctx.event, ctx.urls));
    const toSend: DeliveryWithWebhook[] = [];
    const outcomes: TargetOutcome[] = [];
    for (const { webhookId } of input.targets) {
      const delivery = ctx.deliveries.get(webhookId);
      if (!delivery) outcomes.push({ webhookId, outcome: 'stopped', reason: 'no delivery for this webhook' });
      // Already acknowledged (a retried activity, or a duplicate run): never deliver twice.
      else if (delivery.state === 'completed') outcomes.push({ webhookId, outcome: 'delivered' });
      else toSend.push(delivery);
    }
    const recorder = outcomeRecorder((batch) => recordAttempts(db, input.eventId, batch), toSend.length);
    for (const d of toSend) if (d.attempts === 0) deliveryMetrics.firstAttemptSent(ctx.event.created_at);
    outcomes.push(...(await Promise.all(toSend.map((d) => withLogContext({ webhook_id: d.webhookId }, () => attemptOne(ctx.event.id, body, d, input.retryDelaysMs, recorder.add, ctx.event.test))))));
    const recorded = await recorder.done();
    const status = recorded.status ?? ctx.event.status;
    if (status !== ctx.event.status && (status === 'completed' || status === 'failed')) deliveryMetrics.eventFinished(status);
    await Promise.all(outcomes.map((o) => followUp(o, ctx.deliveries.get(o.webhookId), recorded.failureRuns)));
    return { status, outcomes };
  }

  return {
    attemptDeliveries: (input: AttemptInput) => withLogContext({ event_id: input.eventId }, () => attemptDeliveries(input)),

    /**
     * The remaining attempts to one webhook. Temporal runs them: a failed attempt
     * fails this activity with the schedule's next delay (`nextRetryDelay`, which
     * also carries Retry-After), and the server retries it then. Retried attempts
     * add nothing to the workflow's history, so a failing URL costs the same few
     * events however many attempts it takes; the UI shows the pending activity with
     * its attempt count, last failure and next retry time.
     */
    async retryDelivery(input: RetryInput): Promise<AttemptResult> {
      // The wait before the first retry, when the workflow left it to this activity;
      // an activity retried after a lost worker finds it over and attempts at once.
      const wait = (input.notBefore ?? 0) - Date.now();
      if (wait > 0) await Context.current().sleep(wait);
      const result = await withLogContext({ event_id: input.eventId, webhook_id: input.target.webhookId }, () =>
        attemptDeliveries({ eventId: input.eventId, targets: [input.target], retryDelaysMs: input.retryDelaysMs }),
      );
      const outcome = result.outcomes[0];
      if (outcome?.outcome === 'retry') {
        const failed = ApplicationFailure.create({
          type: 'DeliveryAttemptFailed',
          message: `attempt ${outcome.attempt}: ${outcome.responseCode ? `HTTP ${outcome.responseCode}` : 'no response'} from ${input.target.url}`,
          nextRetryDelay: outcome.retryInMs,
          // An endpoint failing is business as usual: the SDK logs it at DEBUG, not as a worker warning.
          category: ApplicationFailureCategory.BENIGN,
        });
        // The message says what happened; a stack of this code would only be noise in
        // the UI and in every retry's stored failure, and formatting it (source-mapped)
        // was ~2% of the retry worker's CPU per attempt (bench/, `--only retry --profile`).
        failed.stack = '';
        throw failed;
      }
      return result;
    },

    /** Called by the health workflow when a run of failures may have lasted long enough. */
    async disableIfSustained(webhookId: string, since: number, minFailures: number, minSpanMs: number): Promise<HealthVerdict> {
      const verdict = await disableIfSustained(db, webhookId, new Date(since), minFailures, minSpanMs, new Date());
      if (verdict === 'disabled') deliveryMetrics.webhookDisabled('failing');
      return verdict;
    },
  };

  function retryAfter(result: SendResult): number | undefined {
    if (result.status !== 429 && result.status !== 503) return undefined;
    const value = result.headers['retry-after'];
    if (!value) return undefined;
    const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - Date.now();
    return Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
  }
}

/**
 * Whether this failure of a run (1-based) tells the health workflow: the first starts
 * the watch; the threshold's failure and every doubling after it (20, 40, 80, …)
 * repeat it, which makes up for a signal lost while Temporal was unreachable at a
 * cost that grows with the log of the run, not with every `threshold` failures (an
 * endpoint that is down took a signal and a workflow task every 20 of its failures).
 */
export function repeatsHealthSignal(consecutiveFailures: number, threshold: number): boolean {
  if (consecutiveFailures === 1) return true;
  if (consecutiveFailures < threshold || consecutiveFailures % threshold !== 0) return false;
  const multiple = consecutiveFailures / threshold;
  return (multiple & (multiple - 1)) === 0; // a power of two
}

/**
 * Records outcomes in as few transactions as possible without holding a fast
 * answer back for a slow one: what arrives within GATHER_MS of the first unrecorded
 * outcome is recorded together, and everything at once when all are in. Batches
 * are recorded one after another; `done` gives the status after the last one and
 * the failure runs all of them counted.
 */
function outcomeRecorder(record: (batch: AttemptRecord[]) => Promise<Recorded>, expected: number) {
  const waiting: AttemptRecord[] = [];
  let arrived = 0;
  let timer: NodeJS.Timeout | undefined;
  let status: Recorded['status'] | undefined;
  const failureRuns: Recorded['failureRuns'] = new Map();
  let chain: Promise<void> = Promise.resolve();
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const batch = waiting.splice(0);
    if (batch.length === 0) return;
    chain = chain.then(async () => {
      const recorded = await record(batch);
      status = recorded.status;
      for (const [webhookId, run] of recorded.failureRuns) failureRuns.set(webhookId, run);
    });
    chain.catch(() => undefined); // observed by `done`; a failed batch fails the activity, which is retried
  };
  return {
    add(r: AttemptRecord) {
      waiting.push(r);
      if (++arrived >= expected) flush();
      else timer ??= setTimeout(flush, GATHER_MS);
    },
    async done(): Promise<{ status: Recorded['status'] | undefined; failureRuns: Recorded['failureRuns'] }> {
      flush();
      await chain;
      return { status, failureRuns };
    },
  };
}
