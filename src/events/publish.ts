import type { Config } from '../config';
import type { Db } from '../db/database';
import { eventDelivery, insertEvent, type NewEvent } from './events';
import type { TemporalClientSource } from '../engine/client';

export interface PublishDeps {
  config: Config;
  db: Db;
  temporal: TemporalClientSource;
}

/**
 * The one way an Event comes into being, for every producer (operator API,
 * shipment purchases, trackers): commit the Event and its deliveries. A worker's
 * dispatcher starts its delivery workflow (delivery/dispatcher.ts), so publishing
 * needs only the database. Returns the full Event (with `result`).
 */
export async function publishEvent(deps: { db: Db }, input: NewEvent) {
  const { event, urls } = await insertEvent(deps.db, input);
  return eventDelivery(event, urls);
}
