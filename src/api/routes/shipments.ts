import type { Db } from '../../db/database';
import type { TemporalDeps } from '../../engine/client';
import { startTestTracker } from '../../engine/starters';
import { buyWithEndShipper } from '../../shipments/purchase';
import * as shipments from '../../shipments/shipments';
import { principal } from '../auth';
import { bodyOf } from '../body';
import { created, ok } from '../reply';
import { routeTable } from '../route-table';

/** Shipments: only what buying with an EndShipper needs (seed 4.4). */
export const shipmentsRoutes = (deps: TemporalDeps & { db: Db }) =>
  routeTable([
    ['POST', '/shipments', async (req) => created(await shipments.createShipment(deps.db, principal(req), bodyOf(req)))],
    ['GET', '/shipments/:id', async (req) => ok(await shipments.getShipment(deps.db, principal(req), String(req.params.id)))],
    ['POST', '/shipments/:id/buy', async (req) => ok(await buyWithEndShipper(deps.db, principal(req), String(req.params.id), shipments.parseBuy(bodyOf(req)), (trackerId) => startTestTracker(deps, trackerId)))],
  ]);
