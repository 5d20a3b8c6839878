import type { Client } from '@temporalio/client';
import type { Config } from '../src/config';
import type { Db } from '../src/db/database';
import type { EventStatus } from '../src/db/tables/events';
import { send, type SendResult } from '../src/delivery/send';
import { RESERVED_HEADERS } from '../src/domain/custom-headers';
import { type AttemptContext, type AttemptRecord, type DeliveryWithWebhook, loadAttempt, recordAttempts } from '../src/domain/event-deliveries';
import { eventDelivery } from '../src/domain/events';
import { deliveryBody, signature } from '../src/domain/signature';
import { assertDeliverableAddress, basicAuthFromUrl, maskUrl } from '../src/domain/webhook-url';
import { clearFailing, disableWebhook, markFailing } from '../src/domain/webhooks';
import { healthWorkflowId } from '../src/temporal/task-queue';
import { VERSION } from '../src/version';
import type { DeliveryTarget } from '../workflows/deliver-event';
import type { HealthInput, HealthReport } from '../workflows/webhook-health';

export interface AttemptInput {
  eventId: string;
  /** The webhooks to attempt now (URLs masked: the input is visible in the Temporal UI). */
  targets: DeliveryTarget[];
  attempt: number;
  /** No attempts are left after this one. */
  final: boolean;
}

export type TargetOutcome =
  | { webhookId: string; outcome: 'delivered' }
  | { webhookId: string; outcome: 'failed'; responseCode: number; retryAfterMs?: number }
  /** 410 Gone, or the webhook was disabled or deleted: no further attempts. */
  | { webhookId: string; outcome: 'stopped'; reason: string };

export interface AttemptResult {
  /** The event status after this attempt's outcomes were recorded. */
  status: EventStatus;
  outcomes: TargetOutcome[];
}

export interface DeliveryDeps {
  config: Config;
  db: Db;
  temporal: () => Promise<Client>;
}

const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;
/** Outcomes that arrive within this long of each other are recorded in one transaction. */
const GATHER_MS = 100;

export function createDeliveryActivities({ config, db, temporal }: DeliveryDeps) {
  /** Reports an attempt to the webhook's long-lived health workflow (created on first report). */
  async function reportHealth(webhookId: string, report: HealthReport): Promise<void> {
    const client = await temporal();
    const input: HealthInput = { webhookId, disableAfterFailures: config.disableAfterFailures, disableAfterMs: config.disableAfterMs };
    await client.workflow.signalWithStart('webhookHealth', {
      workflowId: healthWorkflowId(webhookId),
      taskQueue: config.taskQueue,
      args: [input],
      signal: 'attempt',
      signalArgs: [report],
    });
  }

  /** One POST to one target; its outcome goes to the recorder as soon as the answer is in. */
  async function attemptOne(ctx: AttemptContext, body: string, delivery: DeliveryWithWebhook, input: AttemptInput, record: (r: AttemptRecord) => void): Promise<TargetOutcome> {
    const { webhookId } = delivery;
    const hook = delivery.webhook;
    if (!hook || hook.deletedAt || hook.disabledAt) {
      record({ webhookId, state: 'failed' });
      return { webhookId, outcome: 'stopped', reason: !hook || hook.deletedAt ? 'webhook deleted' : 'webhook disabled' };
    }
    const { url, authorization } = basicAuthFromUrl(delivery.url);
    const headers: Record<string, string> = {};
    for (const h of hook.customHeaders) if (!RESERVED_HEADERS.has(h.name.toLowerCase())) headers[h.name] = h.value;
    headers['Content-Type'] = 'application/json';
    headers['Accept'] = 'application/json';
    headers['User-Agent'] = `shiphook/${VERSION}`;
    headers['webhook-id'] = ctx.event.id;
    if (hook.secret) headers['X-Hmac-Signature'] = signature(body, hook.secret);
    if (authorization) headers['Authorization'] = authorization;

    let result: SendResult;
    try {
      await assertDeliverableAddress(delivery.url, config);
      result = await send(url, headers, body, config.attemptTimeoutMs);
    } catch (err) {
      result = { status: 0, headers: {}, body: '', totalTimeMs: 0, error: (err as Error).message };
    }
    const ok = result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    record({
      webhookId,
      state: ok ? 'completed' : gone || input.final ? 'failed' : 'pending',
      payload: {
        eventId: ctx.event.id,
        webhookId,
        requestUrl: maskUrl(delivery.url),
        requestHeaders: authorization ? { ...headers, Authorization: 'Basic ***' } : headers,
        requestBody: body,
        responseCode: result.status,
        responseHeaders: result.headers,
        responseBody: result.error ? `shiphook: ${result.error}` : result.body,
        totalTime: result.totalTimeMs,
      },
    });
    if (ok) return { webhookId, outcome: 'delivered' };
    if (gone) return { webhookId, outcome: 'stopped', reason: '410 Gone: webhook disabled' };
    return { webhookId, outcome: 'failed', responseCode: result.status, retryAfterMs: retryAfter(result) };
  }

  /** What follows a recorded outcome for the webhook's health: failing_since, reports, 410. */
  async function followUp(outcome: TargetOutcome, delivery: DeliveryWithWebhook | undefined): Promise<void> {
    const { webhookId } = outcome;
    if (outcome.outcome === 'delivered' && delivery?.webhook?.failingSince) {
      await clearFailing(db, webhookId);
      await reportHealth(webhookId, { ok: true, at: Date.now() });
    } else if (outcome.outcome === 'failed') {
      if (!delivery?.webhook?.failingSince) await markFailing(db, webhookId, new Date());
      await reportHealth(webhookId, { ok: false, at: Date.now() });
    } else if (outcome.outcome === 'stopped' && outcome.reason.startsWith('410')) {
      await disableWebhook(db, webhookId, new Date());
    }
  }

  return {
    /**
     * One attempt of one event to some of its webhooks, in parallel: all of them for
     * the first attempt (run as a local activity), one for each retry.
     */
    async attemptDeliveries(input: AttemptInput): Promise<AttemptResult> {
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
      outcomes.push(...(await Promise.all(toSend.map((d) => attemptOne(ctx, body, d, input, recorder.add)))));
      const status = (await recorder.done()) ?? ctx.event.status;
      await Promise.all(outcomes.map((o) => followUp(o, ctx.deliveries.get(o.webhookId))));
      return { status, outcomes };
    },

    /** Called by the health workflow when failures are sustained. */
    async disableFailingWebhook(webhookId: string): Promise<boolean> {
      return disableWebhook(db, webhookId, new Date());
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
 * Records outcomes in as few transactions as possible without holding a fast
 * answer back for a slow one: what arrives within GATHER_MS of the first unrecorded
 * outcome is recorded together, and everything at once when all are in. Batches
 * are recorded one after another; `done` gives the status after the last one.
 */
function outcomeRecorder(record: (batch: AttemptRecord[]) => Promise<EventStatus>, expected: number) {
  const waiting: AttemptRecord[] = [];
  let arrived = 0;
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<EventStatus | undefined> = Promise.resolve(undefined);
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const batch = waiting.splice(0);
    if (batch.length === 0) return;
    chain = chain.then(() => record(batch));
    chain.catch(() => undefined); // observed by `done`; a failed batch fails the activity, which is retried
  };
  return {
    add(r: AttemptRecord) {
      waiting.push(r);
      if (++arrived >= expected) flush();
      else timer ??= setTimeout(flush, GATHER_MS);
    },
    done(): Promise<EventStatus | undefined> {
      flush();
      return chain;
    },
  };
}
