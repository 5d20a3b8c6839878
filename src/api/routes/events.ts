import type { Db } from '../../db/database';
import type { TemporalDeps } from '../../engine/client';
import { replayEvent } from '../../engine/replay';
import * as events from '../../events/events';
import * as payloads from '../../events/payloads';
import { REPLAY_INPUT, ReplayBody } from '../../engine/replay.schema';
import { parseInput } from '../../schema';
import { principal } from '../auth';
import { bodyOf } from '../body';
import { pageParams } from '../pagination';
import { ok } from '../reply';
import { routeTable } from '../route-table';

/** Events (seed 4.3), their delivery attempts (Payloads) and replay. */
export const eventsRoutes = (db: Db, deps: TemporalDeps) =>
  routeTable([
    ['GET', '/events', async (req) => ok(await events.listEvents(db, principal(req), pageParams(req, 'evt')))],
    ['GET', '/events/:id', async (req) => ok(await events.getEvent(db, principal(req), String(req.params.id)))],
    ['GET', '/events/:id/payloads', async (req) => ok(await payloads.listPayloads(db, principal(req), String(req.params.id)))],
    ['GET', '/events/:id/payloads/:payload_id', async (req) => ok(await payloads.getPayload(db, principal(req), String(req.params.id), String(req.params.payload_id)))],
    ['POST', '/events/:id/replay', async (req) => {
      const event = await events.ownEvent(db, principal(req), String(req.params.id));
      const { all } = parseInput(ReplayBody, bodyOf(req), REPLAY_INPUT);
      return ok(await replayEvent(db, deps, event.id, { all: all === true }));
    }],
  ]);
