import type { TrackerStatus } from '../src/shipments/tables';
import type { Db } from '../src/db/database';
import { publishEvent } from '../src/events/publish';
import { advanceTracker, trackerView } from '../src/shipments/trackers';

export function createTrackerActivities(deps: { db: Db }) {
  return {
    /** One step of a test tracker: store the new status, publish tracker.updated. */
    async advanceTestTracker(trackerId: string, next: TrackerStatus): Promise<void> {
      const moved = await advanceTracker(deps.db, trackerId, next);
      if (!moved) return; // already there: a retried activity publishes nothing twice
      await publishEvent(deps.db, {
        userId: moved.after.user_id,
        mode: moved.after.mode,
        description: 'tracker.updated',
        result: trackerView(moved.after),
        previousAttributes: { status: moved.before.status },
      });
    },
  };
}
