import type { Config } from '../../config';
import type { Db } from '../../db/database';
import { sendTestEvent } from '../../webhooks/test-events';
import { webhookHealth } from '../../webhooks/health';
import { rotateSecret } from '../../webhooks/secret-rotation';
import * as webhooks from '../../webhooks/webhooks';
import { principal } from '../auth';
import { bodyOf } from '../body';
import { created, ok } from '../reply';
import { routeTable } from '../route-table';

/** Webhooks (seed 4.2; statuses per COMPATIBILITY.md, incl. 201 for PATCH), and shiphook's additions. */
export const webhooksRoutes = (db: Db, config: Config) =>
  routeTable([
    ['POST', '/webhooks', async (req) => created(await webhooks.createWebhook(db, config, principal(req), bodyOf(req)))],
    ['GET', '/webhooks', async (req) => ok(await webhooks.listWebhooks(db, principal(req)))],
    ['GET', '/webhooks/:id', async (req) => ok(await webhooks.getWebhook(db, principal(req), String(req.params.id)))],
    ['PATCH', '/webhooks/:id', async (req) => created(await webhooks.updateWebhook(db, principal(req), String(req.params.id), bodyOf(req)))],
    ['DELETE', '/webhooks/:id', async (req) => { await webhooks.deleteWebhook(db, principal(req), String(req.params.id)); return ok({}); }],
    // Beyond the seed: health, secret rotation with a grace period, test events.
    ['GET', '/webhooks/:id/health', async (req) => ok(await webhookHealth(db, principal(req), String(req.params.id)))],
    ['POST', '/webhooks/:id/rotate_secret', async (req) => ok(await rotateSecret(db, config, principal(req), String(req.params.id), bodyOf(req)))],
    ['POST', '/webhooks/:id/test', async (req) => created(await sendTestEvent(db, principal(req), String(req.params.id), bodyOf(req)))],
  ]);
