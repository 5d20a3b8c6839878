import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Db } from '../db/database';
import { listen } from '../db/listen';
import { OUTBOX_CHANNEL } from '../domain/events';
import { log } from '../log';
import { deliveryMetrics } from '../metrics/delivery';
import { claimUndispatched, markDispatched, pendingTargets, releaseClaims, startDelivery } from './dispatch';

/** Events claimed per pass. */
const BATCH_SIZE = 100;
/** Longer than a batch of starts can take (each is bounded by 5 s): then another dispatcher may claim them. */
const LEASE_MS = 30_000;

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

  /** Claim a batch (a lease, no lock held), start each workflow, mark the started ones dispatched. */
  async function dispatchBatch(): Promise<{ claimed: number; failed: number }> {
    const events = await claimUndispatched(db, BATCH_SIZE, LEASE_MS);
    if (events.length === 0) return { claimed: 0, failed: 0 };
    deliveryMetrics.claimed(events.length);
    const targets = await pendingTargets(db, events.map((e) => e.id));
    const starts = await Promise.allSettled(events.map((e) => startDelivery(client, config, e, targets.get(e.id) ?? [], { eager: true })));
    const started = events.filter((_, i) => starts[i]!.status === 'fulfilled').map((e) => e.id);
    const failed = events.filter((_, i) => starts[i]!.status === 'rejected').map((e) => e.id);
    await markDispatched(db, started);
    await releaseClaims(db, failed);
    const eager = starts.filter((s) => s.status === 'fulfilled' && s.value.eager).length;
    log.debug('dispatched', { started: started.length, eager, failed: failed.length });
    if (failed.length) {
      const reason = (starts.find((s) => s.status === 'rejected') as PromiseRejectedResult).reason as Error;
      log.warn('delivery starts failed; the next pass retries them', { count: failed.length, error: String(reason?.message ?? reason).slice(0, 200) });
    }
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
            const { claimed, failed } = await dispatchBatch();
            if (claimed < BATCH_SIZE || failed > 0 || stopped) break; // failures wait for the next pass
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
