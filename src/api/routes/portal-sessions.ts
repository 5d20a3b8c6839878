import type { Config } from '../../config';
import type { Db } from '../../db/database';
import { createPortalSession } from '../../portal-sessions/portal-sessions';
import { principal } from '../auth';
import { created } from '../reply';
import { routeTable } from '../route-table';

/** Portal links (beyond the seed): any key, for its own user and mode. */
export const portalSessionsRoutes = (db: Db, config: Config) =>
  routeTable([
    ['POST', '/portal_sessions', async (req) => created(await createPortalSession(db, config, principal(req), config.publicUrl ?? `${req.protocol}://${req.get('host')}`))],
  ]);
