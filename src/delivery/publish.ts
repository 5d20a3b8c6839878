import type { Config } from '../config';
import type { Db } from '../db/database';
import { eventDelivery, eventUrls, insertEvent, type NewEvent } from '../domain/events';
import type { TemporalClientSource } from '../temporal/client';
import { dispatchOrDefer } from './dispatch';

export interface PublishDeps {
  config: Config;
  db: Db;
  temporal: TemporalClientSource;
}

/**
 * The one way an Event comes into being, for every producer (operator API,
 * shipment purchases, trackers): commit the Event and its deliveries, then start
 * its delivery workflow. Returns the full Event (with `result`).
 */
export async function publishEvent(deps: PublishDeps, input: NewEvent) {
  const row = await insertEvent(deps.db, input);
  if (row.dispatched_at === null) await dispatchOrDefer(deps.temporal, deps.config, deps.db, row);
  return eventDelivery(row, await eventUrls(deps.db, row.id));
}
