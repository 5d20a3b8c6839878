import type { Executor } from '../db/database';
import type { TrackerRow, TrackerStatus } from './tables';
import { isoSeconds } from '../format';
import { CARRIER } from './rates';

/**
 * Trackers of bought shipments. In test mode a tracker advances by itself
 * (workflow testTracker) through TRACKER_STATUSES, in order.
 */

export function trackerView(row: TrackerRow) {
  return {
    id: row.id,
    object: 'Tracker' as const,
    mode: row.mode,
    tracking_code: row.tracking_code,
    status: row.status,
    status_detail: row.status === 'delivered' ? 'arrived_at_destination' : 'unknown',
    carrier: CARRIER,
    weight: row.weight,
    shipment_id: row.shipment_id,
    est_delivery_date: null,
    signed_by: null,
    public_url: null,
    tracking_details: [],
    fees: [],
    created_at: isoSeconds(row.created_at),
    updated_at: isoSeconds(row.updated_at),
  };
}

/** Moves a tracker to `next`; returns it before and after (undefined when already there). */
export async function advanceTracker(db: Executor, trackerId: string, next: TrackerStatus) {
  const before = await db.selectFrom('trackers').selectAll().where('id', '=', trackerId).executeTakeFirst();
  if (!before || before.status === next) return undefined;
  const after = await db
    .updateTable('trackers')
    .set({ status: next, updated_at: new Date() })
    .where('id', '=', trackerId)
    .where('status', '=', before.status)
    .returningAll()
    .executeTakeFirst();
  return after ? { before, after } : undefined;
}
