import type { Config } from '../src/config';
import type { Db } from '../src/db/database';

export interface ActivityDeps {
  config: Config;
  db: Db;
}

/** Activities are built by a factory so tests hand them a real database and HTTP server. */
export function createActivities(_deps: ActivityDeps) {
  return {};
}

export type Activities = ReturnType<typeof createActivities>;
