import type { Config } from '../config';
import type { Db } from '../db/database';
import type { Principal } from '../account/principal';
import { notFound } from '../errors/api-error';
import { isoSeconds } from '../format';
import type { z } from '../schema';
import type { HealthWorkflows } from '../webhooks/health';
import { newWebhookSecret } from '../webhooks/secret-rotation';
import type { WebhookRow } from '../webhooks/tables';
import { maskUrl } from '../webhooks/url';
import { createWebhook, deleteWebhook, ownWebhook, ownWebhooks, updateWebhook } from '../webhooks/webhooks';
import type { NewOperationalWebhook, OperationalWebhookUpdate } from './operational-webhooks.schema';
import { platformPrincipal } from './platform';

/**
 * Operational endpoints: the operator's webhooks for the platform's own events, which are
 * webhooks of the platform user (platform.ts) under the customers' rules — URL checks, the
 * per-account cap, signing, health, disabling, re-enabling by an update — reached through
 * the operator API only.
 */

export function operationalWebhookView(row: WebhookRow) {
  return {
    id: row.id,
    object: 'OperationalWebhook' as const,
    url: maskUrl(row.url),
    event_types: row.event_types,
    created_at: isoSeconds(row.created_at),
    disabled_at: row.disabled_at ? isoSeconds(row.disabled_at) : null,
    disabled_reason: row.disabled_at ? row.disabled_reason : null,
  };
}

/** The platform user as the caller of an operation on an existing endpoint; 404 while it has none. */
async function platform(db: Db): Promise<Principal> {
  const who = await platformPrincipal(db);
  if (!who) throw notFound('Operational webhook not found.');
  return who;
}

/** POST /admin/v1/operational_webhooks: the secret given, or a generated one, answered this once. */
export async function createOperationalWebhook(db: Db, config: Config, input: z.output<typeof NewOperationalWebhook>) {
  const who = (await platformPrincipal(db, { create: true }))!;
  const secret = input.webhook_secret ?? newWebhookSecret();
  const { id } = await createWebhook(db, config, who, { url: input.url, webhook_secret: secret, event_types: input.event_types ?? null });
  return { ...operationalWebhookView(await ownWebhook(db, who, id)), webhook_secret: secret };
}

export async function listOperationalWebhooks(db: Db) {
  const who = await platformPrincipal(db);
  return { operational_webhooks: who ? (await ownWebhooks(db, who)).map(operationalWebhookView) : [] };
}

/** An operational endpoint (a live webhook of the platform user); 404 otherwise. */
export async function ownOperationalWebhook(db: Db, id: string): Promise<WebhookRow> {
  return ownWebhook(db, await platform(db), id);
}

/** PATCH: the secret (replaced at once) and the types; re-enables, as a customer's update does. */
export async function updateOperationalWebhook(db: Db, hook: WebhookRow, input: z.output<typeof OperationalWebhookUpdate>, health: HealthWorkflows) {
  const who = await platform(db);
  await updateWebhook(db, who, hook, { webhook_secret: input.webhook_secret, event_types: input.event_types }, health);
  return operationalWebhookView(await ownWebhook(db, who, hook.id));
}

export async function deleteOperationalWebhook(db: Db, id: string, health: HealthWorkflows): Promise<void> {
  await deleteWebhook(db, await platform(db), id, health);
}
