import { condition, getExternalWorkflowHandle, setCurrentDetails, setHandler, sleep } from '@temporalio/workflow';
import { type AttemptResult, type DeliveryPause, type DeliveryTarget, deliveryWorkflowId, type TargetOutcome, turnSignal } from '../src/engine/contract';

/**
 * The waits of deliveries a webhook's rate limit or order per object held back
 * (activities/admission.ts), and the signals that end the second kind. Each wait is a
 * durable timer whose summary says what it waits for, and while any lasts the run's current
 * details (the Temporal UI's "Current details") list them, so an operator sees why a run is
 * open without reading its history. None of this runs for a webhook with neither setting.
 */

/**
 * A delivery waiting for its object's turn is told when it may have come (`turnSignal`, sent
 * by the run of the event that had it); it checks again anyway after this long, then after
 * twice as long, up to an hour: in case the turn was freed without a signal (that run was
 * terminated, or its event removed). Rechecks stay few over a day-long retry schedule.
 */
const RECHECK_FIRST_MS = 60_000;
const RECHECK_MAX_MS = 3_600_000;

export const isPause = (o: TargetOutcome | undefined): o is DeliveryPause => o?.outcome === 'held' || o?.outcome === 'waiting';

/** A URL as a summary shows it: one line. */
const shortUrl = (url: string) => (url.length > 120 ? url.slice(0, 119) + '…' : url);

/** Registers the turn signal's handler: call it once, in the workflow function. */
export function deliveryPauses() {
  const turns = new Set<string>();
  setHandler(turnSignal, ({ webhookId }) => void turns.add(webhookId));
  /** Per webhook: the delivery's rechecks in a row without a signal. */
  const rechecks = new Map<string, number>();
  const waits = new Map<string, string>();
  const show = () => setCurrentDetails([...waits.values()].map((w) => `- ${w}`).join('\n'));

  return {
    /**
     * Waits until the held-back delivery may be attempted again. Resolves with the slot
     * (epoch ms) a held delivery was given, for its attempt to be sent at.
     */
    async waitOut(pause: DeliveryPause, target: DeliveryTarget): Promise<number | undefined> {
      const url = shortUrl(target.url);
      if (pause.outcome === 'held') {
        const why = `waits for the rate limit of ${url} (${pause.perSecond}/s): its slot is at ${new Date(pause.slotAt).toISOString()}`;
        waits.set(target.webhookId, why);
        show();
        // Workflow time (that of this task): the same on replay.
        if (pause.wakeAt > Date.now()) await sleep(pause.wakeAt - Date.now(), { summary: why });
        waits.delete(target.webhookId);
        show();
        return pause.slotAt;
      }
      const why = `waits for ${pause.behind ?? 'an earlier event'} about ${pause.objectId} to be delivered to ${url} first (ordering per_object)`;
      waits.set(target.webhookId, why);
      show();
      const round = rechecks.get(target.webhookId) ?? 0;
      const told = await condition(() => turns.has(target.webhookId), Math.min(RECHECK_MAX_MS, RECHECK_FIRST_MS * 2 ** round), { summary: why });
      rechecks.set(target.webhookId, told ? 0 : round + 1);
      // A turn signal from here on is about the check that follows, or a later one.
      turns.delete(target.webhookId);
      waits.delete(target.webhookId);
      show();
      return undefined;
    },

    /** Tells the runs of the events that may take an object's turn now that a delivery settled. */
    async passTurns(result: AttemptResult): Promise<void> {
      await Promise.all(
        result.outcomes.map(async (o) => {
          if ((o.outcome === 'delivered' || o.outcome === 'failed' || o.outcome === 'stopped') && o.next) {
            // A run that is not there (not started yet, or over) checks its turn when it starts, or not at all.
            await getExternalWorkflowHandle(deliveryWorkflowId(o.next)).signal(turnSignal, { webhookId: o.webhookId }).catch(() => undefined);
          }
        }),
      );
    },
  };
}
