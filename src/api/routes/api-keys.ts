import type { Db } from '../../db/database';
import * as apiKeys from '../../account/api-keys';
import { principal, requireProduction } from '../auth';
import { bodyOf } from '../body';
import { created, ok } from '../reply';
import { routeTable } from '../route-table';

/** API keys (seed 4.1: DELETE answers an empty object). All production only. */
export const apiKeysRoutes = (db: Db) =>
  routeTable(
    [
      ['POST', '/api_keys', async (req) => created(await apiKeys.createKeys(db, principal(req), apiKeys.parseKeyRequest(bodyOf(req))))],
      ['GET', '/api_keys', async (req) => ok(await apiKeys.listKeys(db, principal(req)))],
      ['POST', '/api_keys/:id/enable', async (req) => ok(await apiKeys.setKeyActive(db, principal(req), String(req.params.id), true))],
      ['POST', '/api_keys/:id/disable', async (req) => ok(await apiKeys.setKeyActive(db, principal(req), String(req.params.id), false))],
      ['DELETE', '/api_keys/:id', async (req) => { await apiKeys.deleteKey(db, principal(req), String(req.params.id)); return ok({}); }],
    ],
    [requireProduction],
  );
