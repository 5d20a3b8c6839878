import type { Db } from '../../db/database';
import { publishEvent } from '../../events/publish';
import { dispatchIncidents, replayProgress, startReplay } from '../../engine/replay';
import { parseNewEvent } from '../../events/events';
import { BULK_REPLAY_INPUT, BulkReplayBody } from '../../engine/replay.schema';
import { parseInput } from '../../schema';
import { ApiError } from '../../errors/api-error';
import { bodyOf } from '../body';
import { created, ok } from '../reply';
import { routeTable } from '../route-table';

/** Operator routes for events under /admin/v1. */
export const adminEventsRoutes = (deps: { db: Db }) =>
  routeTable([
    ['POST', '/events', async (req) => created(await publishEvent(deps.db, parseNewEvent(bodyOf(req))))],
    // Answered at once with a handle: the dispatchers carry the replay out (replay.ts).
    ['POST', '/events/replay', async (req) => ({ status: 202, body: await startReplay(deps.db, parseInput(BulkReplayBody, bodyOf(req), BULK_REPLAY_INPUT)) })],
    ['GET', '/replays/:id', async (req) => {
      const progress = await replayProgress(deps.db, String(req.params.id));
      if (!progress) throw new ApiError('NOT_FOUND', 'Replay not found.');
      return ok(progress);
    }],
    ['GET', '/events/dispatch_incidents', async () => ok({ events: await dispatchIncidents(deps.db) })],
  ]);
