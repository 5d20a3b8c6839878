import type { Db } from '../../db/database';
import * as users from '../../account/users';
import { bodyOf } from '../body';
import { created, ok } from '../reply';
import { routeTable } from '../route-table';

/** Operator API under /admin/v1 (guarded by requireAdmin in app.ts). */
export const adminRoutes = (db: Db) =>
  routeTable([
    ['POST', '/users', async (req) => created(await users.createParentUser(db, bodyOf(req)))],
    ['PATCH', '/users/:id', async (req) => ok(await users.operatorUpdateUser(db, String(req.params.id), bodyOf(req)))],
  ]);
