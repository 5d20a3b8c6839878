import type { Config } from '../src/config';
import type { Db } from '../src/db/database';
import { createDeliveryActivities, type HealthSignals } from './delivery';
import { createTrackerActivities } from './trackers';

export interface ActivityDeps {
  config: Config;
  db: Db;
  health: HealthSignals;
}

/** Activities are built by a factory so tests hand them a real database and HTTP server. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createDeliveryActivities(deps),
    ...createTrackerActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
