import type { Client } from '@temporalio/client';
import type { Config } from '../src/config';
import type { Db } from '../src/db/database';
import { send, type SendResult } from '../src/delivery/send';
import { RESERVED_HEADERS } from '../src/domain/custom-headers';
import { eventDelivery, eventUrls, lockEvent, refreshEventStatus } from '../src/domain/events';
import { recordPayload } from '../src/domain/payloads';
import { deliveryBody, signature } from '../src/domain/signature';
import { assertDeliverableAddress, basicAuthFromUrl, maskUrl } from '../src/domain/webhook-url';
import { disableWebhook } from '../src/domain/webhooks';
import type { DeliveryState, EventStatus } from '../src/db/tables/events';
import { healthWorkflowId } from '../src/temporal/task-queue';
import type { HealthInput, HealthReport } from '../workflows/webhook-health';
import { VERSION } from '../src/version';

export interface AttemptInput {
  eventId: string;
  webhookId: string;
  /** Masked target, for operators reading the history in the Temporal UI. */
  url: string;
  attempt: number;
  /** No attempts are left after this one. */
  final: boolean;
}

export type AttemptOutcome =
  | { outcome: 'delivered'; status: EventStatus }
  | { outcome: 'failed'; status: EventStatus; responseCode: number; retryAfterMs?: number }
  /** 410 Gone, or the webhook was disabled or deleted: no further attempts. */
  | { outcome: 'stopped'; status: EventStatus; reason: string };

export interface DeliveryDeps {
  config: Config;
  db: Db;
  temporal: () => Promise<Client>;
}

const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

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

  /** Ends a delivery (state) and refreshes the event status, under the event's lock. */
  async function settle(eventId: string, webhookId: string, state: DeliveryState, countAttempt: boolean, payload?: Parameters<typeof recordPayload>[1]) {
    return db.transaction().execute(async (trx) => {
      await lockEvent(trx, eventId);
      if (payload) await recordPayload(trx, payload);
      await trx
        .updateTable('event_deliveries')
        .set((eb) => ({ state, updated_at: new Date(), attempts: countAttempt ? eb('attempts', '+', 1) : eb.ref('attempts') }))
        .where('event_id', '=', eventId)
        .where('webhook_id', '=', webhookId)
        .execute();
      return refreshEventStatus(trx, eventId);
    });
  }

  return {
    /** One delivery attempt of one event to one webhook. */
    async attemptDelivery(input: AttemptInput): Promise<AttemptOutcome> {
      const { eventId, webhookId } = input;
      const [event, delivery, hook] = await Promise.all([
        db.selectFrom('events').selectAll().where('id', '=', eventId).executeTakeFirst(),
        db.selectFrom('event_deliveries').selectAll().where('event_id', '=', eventId).where('webhook_id', '=', webhookId).executeTakeFirst(),
        db.selectFrom('webhooks').selectAll().where('id', '=', webhookId).executeTakeFirst(),
      ]);
      if (!event || !delivery) return { outcome: 'stopped', status: event?.status ?? 'failed', reason: 'event or delivery not found' };
      // Already acknowledged (a retried activity, or a duplicate run): never deliver twice.
      if (delivery.state === 'completed') return { outcome: 'delivered', status: event.status };
      if (!hook || hook.deleted_at || hook.disabled_at) {
        const status = await settle(eventId, webhookId, 'failed', false);
        return { outcome: 'stopped', status, reason: hook?.deleted_at || !hook ? 'webhook deleted' : 'webhook disabled' };
      }

      const body = deliveryBody(eventDelivery(event, await eventUrls(db, eventId)));
      const { url, authorization } = basicAuthFromUrl(delivery.url);
      const headers: Record<string, string> = {};
      for (const h of hook.custom_headers) if (!RESERVED_HEADERS.has(h.name.toLowerCase())) headers[h.name] = h.value;
      headers['Content-Type'] = 'application/json';
      headers['Accept'] = 'application/json';
      headers['User-Agent'] = `shiphook/${VERSION}`;
      headers['webhook-id'] = eventId;
      if (hook.webhook_secret) headers['X-Hmac-Signature'] = signature(body, hook.webhook_secret);
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
      const state: DeliveryState = ok ? 'completed' : gone || input.final ? 'failed' : 'pending';
      const status = await settle(eventId, webhookId, state, true, {
        eventId,
        webhookId,
        requestUrl: maskUrl(delivery.url),
        requestHeaders: authorization ? { ...headers, Authorization: 'Basic ***' } : headers,
        requestBody: body,
        responseCode: result.status,
        responseHeaders: result.headers,
        responseBody: result.error ? `shiphook: ${result.error}` : result.body,
        totalTime: result.totalTimeMs,
      });

      if (ok) {
        if (hook.failing_since) {
          await db.updateTable('webhooks').set({ failing_since: null }).where('id', '=', webhookId).execute();
          await reportHealth(webhookId, { ok: true, at: Date.now() });
        }
        return { outcome: 'delivered', status };
      }
      if (gone) {
        await disableWebhook(db, webhookId, new Date());
        return { outcome: 'stopped', status, reason: '410 Gone: webhook disabled' };
      }
      if (!hook.failing_since) await db.updateTable('webhooks').set({ failing_since: new Date() }).where('id', '=', webhookId).where('failing_since', 'is', null).execute();
      await reportHealth(webhookId, { ok: false, at: Date.now() });
      return { outcome: 'failed', status, responseCode: result.status, retryAfterMs: retryAfter(result) };
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
