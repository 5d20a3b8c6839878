import type { PublishDeps } from '../../delivery/publish';
import { publishEvent } from '../../delivery/publish';
import { parseReplayFilter, replayMatching } from '../../delivery/replay';
import { parseNewEvent } from '../../domain/events';
import { bodyOf } from '../body';
import { created, ok } from '../reply';
import { routeTable } from '../route-table';

/** Operator routes for events under /admin/v1. */
export const adminEventsRoutes = (deps: PublishDeps) =>
  routeTable([
    ['POST', '/events', async (req) => created(await publishEvent(deps, parseNewEvent(bodyOf(req))))],
    ['POST', '/events/replay', async (req) => ok(await replayMatching(deps, parseReplayFilter(bodyOf(req))))],
  ]);
