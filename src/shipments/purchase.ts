import type { Db } from '../db/database';
import { type PublishDeps, publishEvent } from '../events/publish';
import { log } from '../log';
import type { TestTrackerInput } from '../../workflows/test-tracker';
import type { Principal } from '../account/principal';
import { type BuyInput, buyShipment } from './shipments';
import { trackerView } from './trackers';

/**
 * Buying with an EndShipper, and what follows the commit: the `tracker.created`
 * event, and in test mode the tracker that advances by itself.
 */
export async function buyWithEndShipper(deps: PublishDeps & { db: Db }, who: Principal, shipmentId: string, input: BuyInput) {
  const { shipment, tracker } = await buyShipment(deps.db, who, shipmentId, input);
  await publishEvent(deps, { userId: who.user.id, mode: who.mode, description: 'tracker.created', result: trackerView(tracker) });
  if (who.mode === 'test') {
    try {
      const client = await deps.temporal();
      const args: TestTrackerInput = { trackerId: tracker.id, stepMs: deps.config.testTrackerStepMs };
      await client.workflow.start('testTracker', { taskQueue: deps.config.taskQueue, workflowId: `test-tracker-${tracker.id}`, args: [args] });
    } catch (err) {
      log.warn('test tracker not started', { tracker_id: tracker.id, error: String((err as Error).message).slice(0, 200) });
    }
  }
  return shipment;
}
