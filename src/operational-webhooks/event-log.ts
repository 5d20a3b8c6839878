import type { Db } from '../db/database';
import type { PageParams } from '../db/paginate';
import { notFound } from '../errors/api-error';
import { eventDelivery, type EventFilter, eventUrls, listEvents, ownEvent } from '../events/events';
import { listPayloads } from '../events/payloads';
import type { EventRow } from '../events/tables';
import { platformPrincipal } from './platform';

/**
 * The operational events as the operator reads them: the platform user's Events and their
 * Payloads, by the events' own rules (src/events/), so what was sent to each endpoint, when
 * and with what answer is recorded as for any event.
 */

export async function listOperationalEvents(db: Db, page: PageParams, filter: EventFilter) {
  const who = await platformPrincipal(db);
  return who ? listEvents(db, who, page, filter) : { events: [], has_more: false };
}

/** An operational event; 404 for any other. */
export async function ownOperationalEvent(db: Db, id: string): Promise<EventRow> {
  const who = await platformPrincipal(db);
  if (!who) throw notFound('Event not found.');
  return ownEvent(db, who, id);
}

/** With its `result`, as its endpoints received it. */
export async function getOperationalEvent(db: Db, id: string) {
  const row = await ownOperationalEvent(db, id);
  return eventDelivery(row, await eventUrls(db, row.id));
}

export async function listOperationalPayloads(db: Db, id: string) {
  const who = await platformPrincipal(db);
  if (!who) throw notFound('Event not found.');
  return listPayloads(db, who, id);
}
