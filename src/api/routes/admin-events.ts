import type { PublishDeps } from '../../delivery/publish';
import { publishEvent } from '../../delivery/publish';
import { parseReplayFilter, replayMatching } from '../../delivery/replay';
import { parseNewEvent } from '../../domain/events';
import { BULK_REPLAY_INPUT, BulkReplayBody } from '../../domain/events.schema';
import { parseInput } from '../../domain/schema';
import { bodyOf } from '../body';
import { created, ok } from '../reply';
import { routeTable } from '../route-table';

/** Operator routes for events under /admin/v1. */
export const adminEventsRoutes = (deps: PublishDeps) =>
  routeTable([
    ['POST', '/events', async (req) => created(await publishEvent(deps, parseNewEvent(bodyOf(req))))],
    ['POST', '/events/replay', async (req) => ok(await replayMatching(deps, parseReplayFilter(parseInput(BulkReplayBody, bodyOf(req), BULK_REPLAY_INPUT))))],
  ]);
