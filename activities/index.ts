import type { Config } from '../src/config';
import type { Db } from '../src/db/database';
import { createDeliveryActivities } from './deliver';
import type { HealthSignals } from '../src/engine/contract';
import { createHealthActivities } from './health';
import { createRetentionActivities } from './retention';
import { createTrackerActivities } from './trackers';

export interface ActivityDeps {
  config: Config;
  db: Db;
  /** The engine's signals to webhooks' health workflows (src/engine/starters.ts). */
  health: HealthSignals;
}

/** Activities are built by a factory so tests hand them a real database and HTTP server. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createDeliveryActivities(deps),
    ...createHealthActivities(deps),
    ...createTrackerActivities(deps),
    ...createRetentionActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
