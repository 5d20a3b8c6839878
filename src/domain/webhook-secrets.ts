import { randomBytes } from 'node:crypto';
import type { Config } from '../config';
import type { Db } from '../db/database';
import { ApiError } from '../errors/api-error';
import { isoSeconds } from '../format';
import type { Principal } from './principal';
import { ownWebhook } from './webhooks';

/**
 * Secret rotation with a grace period (as Stripe's "roll secret"): the new secret signs
 * every delivery from now on (`X-Hmac-Signature` with it alone), and the previous one
 * keeps signing beside it in `webhook-signature` until the grace period ends, so a
 * receiver can switch over without dropping a delivery. Without a given secret one is
 * generated (`whsec_` + 32 random bytes in base64, the Standard Webhooks form).
 */
const MAX_SECRET_LENGTH = 1000;

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function readNewSecret(input: Record<string, unknown>): string {
  const value = input.webhook_secret;
  if (value === undefined || value === null) return newWebhookSecret();
  if (typeof value !== 'string' || value === '' || value.length > MAX_SECRET_LENGTH || /[\u0000-\u001f\u007f]/.test(value)) {
    throw new ApiError('WEBHOOK.INVALID', 'The webhook secret is invalid.', [
      { field: 'webhook_secret', message: `must be a string of 1 to ${MAX_SECRET_LENGTH} characters without control characters` },
    ]);
  }
  return value;
}

/** POST /webhooks/:id/rotate_secret → the new secret, shown this once. */
export async function rotateSecret(db: Db, config: Pick<Config, 'secretRotationGraceMs'>, who: Principal, id: string, input: Record<string, unknown>) {
  const secret = readNewSecret(input);
  const hook = await ownWebhook(db, who, id);
  const expires = hook.webhook_secret ? new Date(Date.now() + config.secretRotationGraceMs) : null;
  await db
    .updateTable('webhooks')
    .set({ webhook_secret: secret, previous_webhook_secret: hook.webhook_secret, previous_secret_expires_at: expires, updated_at: new Date() })
    .where('id', '=', hook.id)
    .where('user_id', '=', who.user.id)
    .where('mode', '=', who.mode)
    .execute();
  return {
    object: 'WebhookSecret' as const,
    webhook_id: hook.id,
    webhook_secret: secret,
    previous_secret_expires_at: expires ? isoSeconds(expires) : null,
  };
}
