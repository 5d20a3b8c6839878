import { acknowledges } from '../src/events/payloads';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { Config } from '../src/config';
import type { Db } from '../src/db/database';
import type { AttemptInput, AttemptResult, HealthSignals, RetryInput, TargetOutcome } from '../src/engine/contract';
import { deliveryBody, signedRequest } from '../src/engine/signed-request';
import { attemptRecorder, type AttemptRecord } from '../src/events/deliveries';
import { eventDelivery, type EventUrls, urlsOf } from '../src/events/events';
import type { DeliveryState, EventRow } from '../src/events/tables';
import { newId } from '../src/ids';
import { log, withLogContext } from '../src/log';
import { attemptOutcome, deliveryMetrics } from '../src/metrics/delivery';
import { createHttpClient, type SendResult } from '../src/outbound/http-client';
import { createListenerTransport, isListenerUrl } from '../src/outbound/listener-transport';
import type { CustomHeader } from '../src/webhooks/tables';
import { redactUrl } from '../src/webhooks/url';
import { healthFollowUp } from './health';
import { admit, atSlot, passTurns, type RateSlot } from './admission';
import type { DeliveryOrdering } from '../src/webhooks/tables';
import { reportExhausted } from '../src/operational-webhooks/delivery-changes';

/**
 * Delivery attempts: read what the attempt needs (one statement), build each signed
 * request (src/engine/signed-request.ts), POST it (src/outbound/http-client.ts), then
 * record the outcomes (src/events/deliveries.ts) and follow up on the webhooks'
 * health (./health.ts).
 */

const JITTER = 0.2;
const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

export interface DeliveryDeps {
  config: Config;
  db: Db;
  health: HealthSignals;
}

export function createDeliveryActivities(deps: DeliveryDeps) {
  const { config, db } = deps;
  // Every POST leaves through this client: its connections resolve, check and pin the address.
  const http = createHttpClient({ ...config.webhooks, timeoutMs: config.attemptTimeoutMs, listeners: createListenerTransport(db, config.databaseUrl) });
  const followUp = healthFollowUp(deps);
  /**
   * Retries waiting in their workflow's task (workflows/deliver-event.ts): at most a quarter of the
   * worker's task slots, so first attempts always find free ones however many endpoints fail.
   * Beyond that, a retry goes to the retry task queue, as every later one does.
   */
  const RETRIES_IN_TASK_MAX = Math.max(1, Math.floor(config.worker.workflowTaskSlots / 4));
  let retriesInTask = 0;

  /**
   * One POST to one target (at its rate-limit slot, when it has one); its outcome goes to the
   * recorder as soon as the answer is in.
   */
  async function attemptOne(event: EventRow, body: string, delivery: DeliveryWithWebhook, retryDelaysMs: number[], record: (r: AttemptRecord) => void, slot?: RateSlot): Promise<TargetOutcome> {
    const { webhookId } = delivery;
    const hook = delivery.webhook;
    if (!hook || hook.deletedAt || hook.disabledAt) {
      record({ webhookId, before: delivery, state: 'failed' });
      return { webhookId, outcome: 'stopped', reason: !hook || hook.deletedAt ? 'webhook deleted' : 'webhook disabled' };
    }
    // Held after all (its send time far off): nothing sent, nothing recorded.
    const admitted = slot && (await atSlot(db, event.id, delivery, slot));
    if (admitted && 'held' in admitted) return admitted.held;
    // Numbered by the attempts actually sent: an activity retried after an
    // infrastructure error (nothing recorded) does not use up an attempt.
    const attempt = delivery.attempts + 1;
    const final = attempt > retryDelaysMs.length;
    // The Payload's id is made before the POST, so the request can name the record it will be.
    const payloadId = newId('payload');
    const request = signedRequest({ id: event.id, type: event.description, body, test: event.test }, { ...hook, url: delivery.url }, { sentAt: new Date(), number: attempt, payloadId });
    const traced = () => ({ url: redactUrl(delivery.url), attributes: { 'shiphook.event.id': event.id, 'shiphook.webhook.id': webhookId, 'shiphook.attempt': attempt, 'shiphook.payload.id': payloadId } });
    const [result] = await Promise.all([http.post(request.url, request.headers, request.body, traced), admitted?.sent]);
    const measured = attemptOutcome(result.status, result.error, result.reason === 'ADDRESS_REFUSED' || result.reason === 'HTTP_REFUSED');
    deliveryMetrics.attempt(measured, attempt, result.totalTimeMs / 1000);
    log.debug('delivery attempt', { event_id: event.id, webhook_id: webhookId, attempt, outcome: measured, ms: result.totalTimeMs });
    const ok = acknowledges(result.status);
    const gone = result.status === 410;
    // Planned before recording, so the attempt's record carries when the next one is due.
    const delayMs = isListenerUrl(delivery.url) ? Math.min(retryDelaysMs[attempt - 1]!, config.listeners.maxRetryDelayMs) : retryDelaysMs[attempt - 1]!;
    const inMs = ok || gone || final ? undefined : Math.round(Math.max(delayMs * (1 - JITTER + Math.random() * 2 * JITTER), retryAfter(result) ?? 0));
    const retry = inMs === undefined ? undefined : { retryInMs: inMs, retryAt: Date.now() + inMs };
    record({
      webhookId,
      before: delivery,
      state: ok ? 'completed' : gone || final ? 'failed' : 'pending',
      ...(retry ? { nextAttemptAt: new Date(retry.retryAt) } : {}),
      payload: {
        id: payloadId,
        attempt,
        eventId: event.id,
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
    if (!retry) return { webhookId, outcome: 'failed', attempt, responseCode: result.status };
    return { webhookId, outcome: 'retry', attempt, responseCode: result.status, ...retry };
  }

  /**
   * One attempt of one event to some of its webhooks, in parallel: all of them for
   * the first attempt (run as a local activity), one for each retry. Those a webhook's
   * order per object or rate limit holds back are not attempted (./admission.ts).
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
      // Given up (its webhook was disabled meanwhile: events/deliveries.ts): a replay or recovery makes it pending again.
      else if (delivery.state === 'failed') outcomes.push({ webhookId, outcome: 'stopped', reason: 'delivery given up' });
      else toSend.push(delivery);
    }
    const { send, paused } = await admit(db, ctx.event, toSend, input.slot);
    outcomes.push(...paused);
    const recorder = attemptRecorder(db, input.eventId, send.length);
    for (const { delivery: d } of send) if (d.attempts === 0) deliveryMetrics.firstAttemptSent(ctx.event.created_at);
    outcomes.push(...(await Promise.all(send.map(({ delivery: d, slot }) => withLogContext({ webhook_id: d.webhookId }, () => attemptOne(ctx.event, body, d, input.retryDelaysMs, recorder.add, slot))))));
    const recorded = await recorder.done();
    const status = recorded.status ?? ctx.event.status;
    if (status !== ctx.event.status && (status === 'completed' || status === 'failed')) deliveryMetrics.eventFinished(status);
    await Promise.all(outcomes.map((o) => followUp(o, !!ctx.deliveries.get(o.webhookId)?.webhook?.failingSince, recorded.failureRuns)));
    await reportExhausted(db, ctx.event, outcomes.flatMap((o) => (o.outcome === 'failed' ? [o] : [])), Context.current().info.workflowExecution?.runId ?? '');
    return { status, outcomes: await passTurns(db, ctx.event, ctx.deliveries, outcomes) };
  }

  return {
    attemptDeliveries: async (input: AttemptInput) => {
      if (input.notBefore === undefined) return withLogContext({ event_id: input.eventId }, () => attemptDeliveries(input));
      // A retry made in its workflow's task holds one of the worker's task slots while it waits.
      if (retriesInTask >= RETRIES_IN_TASK_MAX) throw retryNotInTask();
      retriesInTask++;
      try {
        const wait = input.notBefore - Date.now();
        if (wait > 0) await Context.current().sleep(wait);
        return await withLogContext({ event_id: input.eventId }, () => attemptDeliveries(input));
      } finally {
        retriesInTask--;
      }
    },

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
        const failed = benignFailure({
          type: 'DeliveryAttemptFailed',
          message: `attempt ${outcome.attempt} of ${input.retryDelaysMs.length + 1}: ${outcome.responseCode ? `HTTP ${outcome.responseCode}` : 'no response'} from ${input.target.url}`,
          nextRetryDelay: outcome.retryInMs,
          // For the workflow, if this was the activity's last Temporal attempt (workflows/deliver-event.ts).
          details: [outcome.retryInMs],
        });
        throw failed;
      }
      return result;
    },
  };
}

/** Retry-After of a 429 or 503, in ms (capped), when it asks for longer than the schedule. */
function retryAfter(result: SendResult): number | undefined {
  if (result.status !== 429 && result.status !== 503) return undefined;
  const value = result.headers['retry-after'];
  if (!value) return undefined;
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
}

// ---- the attempt's read ------------------------------------------------------------

/** A delivery row with what its webhook says about sending to it. */
export interface DeliveryWithWebhook {
  webhookId: string;
  /** As stored: may carry `user:password@` for Basic auth. Mask before showing it. */
  url: string;
  state: DeliveryState;
  /** Attempts sent so far: the next one is number `attempts + 1`. */
  attempts: number;
  /** Why it was held back before (./admission.ts). */
  waitingFor: string | null;
  /** Undefined when the webhook row is gone. */
  webhook?: {
    rateLimit: number | null;
    ordering: DeliveryOrdering;
    customHeaders: CustomHeader[];
    secret: string | null;
    /** A rotated-out secret still in its grace period (signs beside `secret`). */
    previousSecret: string | null;
    disabledAt: Date | null;
    deletedAt: Date | null;
    failingSince: Date | null;
  };
}

export interface AttemptContext {
  event: EventRow;
  deliveries: Map<string, DeliveryWithWebhook>;
  /** As of sending: what the delivered body says. */
  urls: EventUrls;
}

/**
 * Everything one attempt needs, in one read: the event's columns come once per
 * delivery row (left joins: an event without deliveries is one row), so an attempt
 * costs one statement before its POSTs (docs/performance.md). Undefined for an
 * unknown event.
 */
export async function loadAttempt(db: Db, eventId: string): Promise<AttemptContext | undefined> {
  const rows = await db
    .selectFrom('events as e')
    .leftJoin('event_deliveries as d', 'd.event_id', 'e.id')
    .leftJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .selectAll('e')
    .select(['d.webhook_id', 'd.url', 'd.state', 'd.attempts', 'd.waiting_for', 'w.id as hook_id', 'w.rate_limit', 'w.ordering', 'w.custom_headers', 'w.webhook_secret', 'w.previous_webhook_secret', 'w.previous_secret_expires_at', 'w.disabled_at', 'w.deleted_at', 'w.failing_since'])
    .where('e.id', '=', eventId)
    .orderBy('d.webhook_id')
    .execute();
  const first = rows[0];
  if (!first) return undefined;
  const { webhook_id: _w, url: _u, state: _s, attempts: _a, waiting_for: _wf, rate_limit: _rl, ordering: _o, hook_id: _h, custom_headers: _c, webhook_secret: _ws, previous_webhook_secret: _p, previous_secret_expires_at: _pe, disabled_at: _di, deleted_at: _de, failing_since: _f, ...event } = first;
  const deliveries = new Map<string, DeliveryWithWebhook>();
  const sent: { url: string; state: DeliveryState }[] = [];
  for (const r of rows) {
    if (r.webhook_id === null || r.url === null || r.state === null || r.attempts === null) continue; // no deliveries
    sent.push({ url: r.url, state: r.state });
    deliveries.set(r.webhook_id, {
      webhookId: r.webhook_id,
      url: r.url,
      state: r.state,
      attempts: r.attempts,
      waitingFor: r.waiting_for,
      webhook: r.hook_id
        ? {
            rateLimit: r.rate_limit,
            ordering: r.ordering ?? 'none',
            customHeaders: r.custom_headers ?? [],
            secret: r.webhook_secret,
            previousSecret: r.previous_secret_expires_at && r.previous_secret_expires_at.getTime() > Date.now() ? r.previous_webhook_secret : null,
            disabledAt: r.disabled_at,
            deletedAt: r.deleted_at,
            failingSince: r.failing_since,
          }
        : undefined,
    });
  }
  return { event, deliveries, urls: urlsOf(sent) };
}

/**
 * A failure that is business as usual (an endpoint failing, a retry sent elsewhere): benign, so
 * the SDK logs it at DEBUG, not as a worker warning; and without a stack, which would only be
 * noise in the UI and in every stored failure, and whose (source-mapped) formatting costs CPU on
 * every failed attempt (docs/performance.md).
 */
function benignFailure(options: Omit<Parameters<typeof ApplicationFailure.create>[0], 'category'>) {
  const failure = ApplicationFailure.create({ ...options, category: ApplicationFailureCategory.BENIGN });
  failure.stack = '';
  return failure;
}

/** Refuses a retry in the workflow's task (the worker's share of them is taken): the workflow sends it to the retry task queue. */
const retryNotInTask = () =>
  benignFailure({
    type: 'RetryNotInTask',
    message: 'the worker has as many retries waiting in workflow tasks as it takes: this one goes to the retry task queue',
    nonRetryable: true,
  });
