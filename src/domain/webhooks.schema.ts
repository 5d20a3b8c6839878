import { CustomHeader, CustomHeaderList } from './custom-headers';
import { type InputRules, NOT_STORABLE, storable, z } from './schema';

/** Request and response schemas of webhooks (seed 2.3, 4.2). */
export const MAX_SECRET_LENGTH = 1000;
export const MAX_URL_LENGTH = 2048;

const Secret = z
  .string({ error: 'must be a string' })
  .max(MAX_SECRET_LENGTH, `must be at most ${MAX_SECRET_LENGTH} characters`)
  .refine(storable, NOT_STORABLE)
  .nullish()
  .openapi({ description: 'Write-only HMAC secret; `null` or `""` clears it (on update).', example: 'sécret' });

export const WebhookCreate = z
  .object(
    {
      url: z
        .string({ error: (iss) => (iss.input === undefined || iss.input === null ? 'cannot be blank' : 'must be a string') })
        .max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`)
        .openapi({ description: 'https URL; without a scheme `https://` is assumed. `user:password@` sends Basic auth.', example: 'example.com/webhook' }),
      webhook_secret: Secret,
      custom_headers: CustomHeaderList.optional(),
    },
    { error: 'must be an object' },
  )
  .openapi('WebhookCreate');

export const CreateWebhookBody = z.object({ webhook: WebhookCreate }).openapi({ example: { webhook: { url: 'example.com/webhook', webhook_secret: 'sécret' } } });

export const UpdateWebhookBody = z
  .object({ webhook_secret: Secret, custom_headers: CustomHeaderList.optional() }, { error: 'must be a JSON object' })
  .openapi({ description: 'Top-level fields; any update re-enables a disabled webhook. `custom_headers` replaces the list.', example: { webhook_secret: 'new secret' } });

export const WEBHOOK_INPUT: InputRules = { code: 'WEBHOOK.INVALID', message: 'The webhook could not be saved.' };

export const Webhook = z
  .strictObject({
    id: z.string().openapi({ example: 'hook_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }),
    object: z.literal('Webhook'),
    mode: z.enum(['test', 'production']),
    url: z.string().openapi({ example: 'https://example.com/webhook' }),
    created_at: z.string().openapi({ format: 'date-time', example: '2026-01-31T12:00:00Z' }),
    disabled_at: z.string().nullable().openapi({ format: 'date-time' }),
    custom_headers: z.array(CustomHeader),
  })
  .openapi('Webhook');

export const WebhookList = z.strictObject({ webhooks: z.array(Webhook) }).openapi('WebhookList');
