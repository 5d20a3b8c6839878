import type { Db } from '../../db/database';
import * as users from '../../account/users';
import { principal, requireProduction } from '../auth';
import { bodyOf } from '../body';
import { pageParams } from '../pagination';
import { created, noContent, ok } from '../reply';
import { routeTable } from '../route-table';

/** Users (seed 4.5; children routes per COMPATIBILITY.md). All production only. */
export const usersRoutes = (db: Db) =>
  routeTable(
    [
      ['GET', '/users', async (req) => ok(await users.userView(db, principal(req).user))],
      ['PATCH', '/users', async (req) => ok(await users.updateUser(db, principal(req), undefined, bodyOf(req)))],
      ['POST', '/users', async (req) => created(await users.createChildUser(db, principal(req), bodyOf(req)))],
      ['GET', '/users/children', async (req) => ok(await users.listChildren(db, principal(req), pageParams(req, 'user')))],
      ['GET', '/users/:id', async (req) => ok(await users.userView(db, await users.visibleUser(db, principal(req), String(req.params.id))))],
      ['PATCH', '/users/:id', async (req) => ok(await users.updateUser(db, principal(req), String(req.params.id), bodyOf(req)))],
      ['DELETE', '/users/:id', async (req) => { await users.deleteChildUser(db, principal(req), String(req.params.id)); return noContent(); }],
    ],
    [requireProduction],
  );
