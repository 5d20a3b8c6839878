import type { Db } from '../db/database';
import { publishEvent } from '../events/publish';
import { log } from '../log';
import type { Principal } from '../account/principal';
import { type BuyInput, buyShipment } from './shipments';
import { trackerView } from './trackers';
import { errorText } from '../errors/error-text';

/** Starts a test-mode tracker that advances by itself (the engine's, passed in by the caller). */
export type StartTestTracker = (trackerId: string) => Promise<void>;

/**
 * Buying with an EndShipper, and what follows the commit: the `tracker.created`
 * event, and in test mode the tracker that advances by itself.
 */
export async function buyWithEndShipper(db: Db, who: Principal, shipmentId: string, input: BuyInput, startTestTracker: StartTestTracker) {
  const { shipment, tracker } = await buyShipment(db, who, shipmentId, input);
  await publishEvent(db, { userId: who.user.id, mode: who.mode, description: 'tracker.created', result: trackerView(tracker) });
  if (who.mode === 'test') {
    try {
      await startTestTracker(tracker.id);
    } catch (err) {
      log.warn('test tracker not started', { tracker_id: tracker.id, error: errorText(err) });
    }
  }
  return shipment;
}
