import { setTimeout as sleep } from 'node:timers/promises';
import { errorText } from '../errors/error-text';
import { log } from '../log';
import type { HealthSignals } from './contract';

/**
 * Signals to one webhook's health workflow from one worker, at least this far apart. An endpoint
 * that flaps (failing, answering, failing) starts and ends a run of failures on every flip; each
 * signal is a write to the one workflow of that webhook, and makes it decide again.
 */
export const HEALTH_SIGNAL_SPACING_MS = 1000;

/**
 * A worker's health signals (src/engine/starters.ts), sent off the delivery attempt's path: the
 * attempt that reports a run's start or end returns at once, and its webhook's signals go one at
 * a time, `spacingMs` apart, the state reported meanwhile replacing the one not yet sent (the
 * workflow wants the latest: a run started at `since`, or none).
 *
 * Awaited in the attempt, a flapping endpoint's signals queued for seconds behind each other at
 * the workflow, and held the attempts that sent them with their task slots; a signal that failed
 * failed the attempt after its POST was recorded, and the retried activity sent its failed URLs
 * again at once. Now a signal that fails is logged. One lost (it failed, or the process stopped
 * before sending it) is made up for: the database holds the run, the workflow decides from it, and
 * the run's failures at the threshold and its doublings signal again (activities/health.ts).
 */
export function spacedHealthSignals(send: HealthSignals, spacingMs = HEALTH_SIGNAL_SPACING_MS): HealthSignals {
  /** The latest state reported for a webhook and not yet sent: a run started at `since`, or over. */
  const latest = new Map<string, { since?: Date }>();
  /** Webhooks whose signals are being sent (or whose spacing is not over). */
  const sending = new Set<string>();

  const sendAll = async (webhookId: string) => {
    sending.add(webhookId);
    try {
      for (let next = latest.get(webhookId); next; next = latest.get(webhookId)) {
        latest.delete(webhookId);
        const sentAt = Date.now();
        try {
          await (next.since ? send.failing(webhookId, next.since) : send.recovered(webhookId));
        } catch (err) {
          log.warn('could not tell the health workflow of a webhook; its run of failures tells it again', { webhook_id: webhookId, error: errorText(err) });
        }
        const rest = spacingMs - (Date.now() - sentAt);
        if (rest > 0) await sleep(rest, undefined, { ref: false });
      }
    } finally {
      sending.delete(webhookId);
    }
  };
  const report = (webhookId: string, state: { since?: Date }) => {
    latest.set(webhookId, state);
    if (!sending.has(webhookId)) void sendAll(webhookId);
    return Promise.resolve();
  };
  return {
    failing: (webhookId, since) => report(webhookId, { since }),
    recovered: (webhookId) => report(webhookId, {}),
  };
}
