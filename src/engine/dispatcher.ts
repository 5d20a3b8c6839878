import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Db } from '../db/database';
import { listen } from '../db/listen';
import { OUTBOX_CHANNEL } from '../events/publish';
import { log } from '../log';
import { deliveryMetrics } from '../metrics/delivery';
import { claimUndispatched, isPermanentStartFailure, markDispatched, markDispatchFailed, releaseClaims, startDelivery } from './outbox';

/** Events claimed per pass at most, and at least while Temporal struggles (see `batchSize`). */
const BATCH_SIZE = 100;
const MIN_BATCH_SIZE = 5;
/**
 * Longer than a batch of starts can take (they run at once, each bounded by 5 s):
 * then another dispatcher may claim them. Also how long the events a killed worker
 * had claimed wait (a second start of one is harmless: dispatch.ts).
 */
export const LEASE_MS = 15_000;

export interface DispatcherOptions {
  db: Db;
  databaseUrl: string;
  /** Shares its NativeConnection with this process's worker, for eager starts. */
  client: Client;
  config: Config;
  /** Safety net: a pass this often even without a notification (one lost with a dropped connection). */
  intervalMs: number;
}

/**
 * The outbox dispatcher; every worker runs one. Publishing commits an event and
 * NOTIFYs; the dispatcher claims committed events that have no workflow yet with
 * a lease (so several workers share the work and none holds locks while it talks
 * to Temporal), starts their delivery workflows with eager start, so the first
 * workflow task, and with it the first attempt, runs here without a round trip
 * through the server's task queue, and marks them dispatched. An event whose start
 * failed (Temporal unreachable) is released and tried again on the next pass; one
 * whose dispatcher died is claimed again when its lease runs out.
 */
export function startDispatcher(opts: DispatcherOptions): { stop(): Promise<void> } {
  const { db, client, config } = opts;
  let wanted = false;
  let draining: Promise<void> | undefined;
  let stopped = false;
  // Starts run at once; after a failed one (Temporal just restarted and slow to answer,
  // or down) fewer are sent together, so they are not all timed out together: halved
  // per failing pass, doubled per clean one.
  let batchSize = BATCH_SIZE;

  /** Claim a batch with its pending deliveries (a lease, no lock held), start each workflow, mark the started ones dispatched. */
  async function dispatchBatch(): Promise<{ claimed: number; failed: number }> {
    const events = await claimUndispatched(db, batchSize, LEASE_MS);
    if (events.length === 0) return { claimed: 0, failed: 0 };
    deliveryMetrics.claimed(events.length);
    const starts = await Promise.allSettled(events.map((e) => startDelivery(client, config, e, e.targets, { eager: true })));
    const started = events.filter((_, i) => starts[i]!.status === 'fulfilled').map((e) => e.id);
    const refused: { id: string; error: string }[] = [];
    const failed: string[] = [];
    let transientError: unknown;
    events.forEach((e, i) => {
      const s = starts[i]!;
      if (s.status === 'fulfilled') return;
      if (isPermanentStartFailure(s.reason)) refused.push({ id: e.id, error: errorText(s.reason) });
      else {
        failed.push(e.id);
        transientError ??= s.reason;
      }
    });
    await markDispatched(db, started);
    await releaseClaims(db, failed);
    await markDispatchFailed(db, refused);
    const eager = starts.filter((s) => s.status === 'fulfilled' && s.value.eager).length;
    log.debug('dispatched', { started: started.length, eager, failed: failed.length, refused: refused.length });
    deliveryMetrics.startsFailed('transient', failed.length);
    deliveryMetrics.startsFailed('incident', refused.length);
    for (const r of refused) {
      // Once per event: it is not claimed again until an operator replays it.
      log.error('Temporal refused to start the delivery workflow; the event is marked as a dispatch incident (replay it once the cause is fixed)', { event_id: r.id, error: r.error.slice(0, 300) });
    }
    if (failed.length) {
      log.warn('delivery starts failed; the next pass retries them', { count: failed.length, error: errorText(transientError).slice(0, 200) });
    }
    batchSize = failed.length ? Math.max(MIN_BATCH_SIZE, Math.floor(batchSize / 2)) : Math.min(BATCH_SIZE, batchSize * 2);
    return { claimed: events.length, failed: failed.length };
  }

  /** Dispatches until nothing is left; a notification during a pass asks for another. */
  function wake(): void {
    wanted = true;
    draining ??= (async () => {
      try {
        while (wanted && !stopped) {
          wanted = false;
          for (;;) {
            const asked = batchSize;
            const { claimed, failed } = await dispatchBatch();
            if (claimed < asked || failed > 0 || stopped) break; // failures wait for the next pass
          }
        }
      } catch (err) {
        log.warn('dispatch pass failed', { error: String((err as Error).message ?? err).slice(0, 200) });
      } finally {
        draining = undefined;
      }
    })();
  }

  // A notification per committed event; on (re)connect, a pass for what was committed meanwhile.
  // While the connection is down, the timer keeps passes going.
  const listener = listen(opts.databaseUrl, OUTBOX_CHANNEL, wake, (listening) => listening && wake());
  const timer = setInterval(wake, opts.intervalMs);

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await draining;
      await listener.close();
    },
  };
}

/** The message and its causes' ("Failed to start Workflow" alone does not say why). */
function errorText(err: unknown): string {
  const parts: string[] = [];
  for (let e = err as { message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    parts.push(String(e.message ?? e));
  }
  return parts.join(': ');
}
