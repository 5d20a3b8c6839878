import { randomBytes } from 'node:crypto';
import type { Config } from '../config';
import type { Db } from '../db/database';
import { isoSeconds } from '../format';
import { ownedBy, type Principal } from '../account/principal';
import { ownWebhook } from './webhooks';
import { reportSecretRotated } from '../operational-webhooks/webhook-changes';

/**
 * Secret rotation with a grace period (as Stripe's "roll secret"): the new secret signs
 * every delivery from now on (`X-Hmac-Signature` with it alone), and the previous one
 * keeps signing beside it in `webhook-signature` until the grace period ends, so a
 * receiver can switch over without dropping a delivery. Without a given secret one is
 * generated (`whsec_` + 32 random bytes in base64, the Standard Webhooks form).
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** POST /webhooks/:id/rotate_secret → the new secret (the one given, or a new one), shown this once. */
export async function rotateSecret(db: Db, config: Pick<Config, 'secretRotationGraceMs'>, who: Principal, id: string, given?: string | null) {
  const secret = given || newWebhookSecret();
  const hook = await ownWebhook(db, who, id);
  const expires = hook.webhook_secret ? new Date(Date.now() + config.secretRotationGraceMs) : null;
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('webhooks')
      .set({ webhook_secret: secret, previous_webhook_secret: hook.webhook_secret, previous_secret_expires_at: expires, updated_at: new Date() })
      .where('id', '=', hook.id)
      .where(ownedBy(who))
      .execute();
    await reportSecretRotated(trx, hook.id, { by: 'rotation', previousSecretExpiresAt: expires });
  });
  return {
    object: 'WebhookSecret' as const,
    webhook_id: hook.id,
    webhook_secret: secret,
    previous_secret_expires_at: expires ? isoSeconds(expires) : null,
  };
}
