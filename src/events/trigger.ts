import type { Db } from '../db/database';
import type { Principal } from '../account/principal';
import { testEventOf } from '../webhooks/test-events';
import { publishEvent } from './publish';
import type { EventType } from './types';

/**
 * POST /events/trigger `{description}` (`shiphook trigger tracker.updated`): a test-mode
 * event of that type for the key's user, with the event catalogue's example as its
 * `result` (as a test event has it), published as any event is: to every webhook and
 * listener of the user in test mode that subscribes to the type. Test keys only (the
 * operation says so): it makes data, and live receivers must never get invented events.
 */
export function triggerEvent(db: Db, who: Principal, type: EventType) {
  return publishEvent(db, { userId: who.user.id, mode: who.mode, description: type, ...testEventOf(type, who.mode, new Date()) });
}
