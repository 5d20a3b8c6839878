import type { Db } from '../../db/database';
import * as endShippers from '../../end-shippers/end-shippers';
import { principal } from '../auth';
import { bodyOf } from '../body';
import { pageParams } from '../pagination';
import { created, ok } from '../reply';
import { routeTable } from '../route-table';

/** EndShippers (seed 4.4). */
export const endShippersRoutes = (db: Db) =>
  routeTable([
    ['POST', '/end_shippers', async (req) => created(await endShippers.createEndShipper(db, principal(req), bodyOf(req)))],
    ['GET', '/end_shippers', async (req) => ok(await endShippers.listEndShippers(db, principal(req), pageParams(req, 'es')))],
    ['GET', '/end_shippers/:id', async (req) => ok(await endShippers.getEndShipper(db, principal(req), String(req.params.id)))],
    ['PUT', '/end_shippers/:id', async (req) => ok(await endShippers.replaceEndShipper(db, principal(req), String(req.params.id), bodyOf(req)))],
  ]);
