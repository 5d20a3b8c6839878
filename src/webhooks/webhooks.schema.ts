import { CustomHeader, CustomHeaderList } from './custom-headers';
import { EVENT_TYPES } from '../events/types';
import { normalizeTypePatterns, parseTypePatterns, TYPE_PATTERNS } from '../events/type-patterns';
import { type InputRules, NOT_STORABLE, storable, z } from '../schema';
import { Mode } from '../account/api-keys.schema';
import { DISABLED_REASONS, HEALTH_STATES } from './tables';

/** Request and response schemas of webhooks (the API specification, 2.3 and 4.2). */
export const MAX_SECRET_LENGTH = 1000;
export const MAX_URL_LENGTH = 2048;

const Secret = z
  .string({ error: 'must be a string' })
  .max(MAX_SECRET_LENGTH, `must be at most ${MAX_SECRET_LENGTH} characters`)
  .refine(storable, NOT_STORABLE)
  .nullish()
  .openapi({ description: 'Write-only HMAC secret; `null` or `""` clears it (on update).', example: 'sécret' });

/** More than every distinct valid entry: a longer list is a mistake, refused before its entries are read. */
export const MAX_EVENT_TYPE_ENTRIES = 100;
const NOT_A_LIST = 'must be a list of event types, family wildcards (`tracker.*`) or `*`; null (or leaving it out) for every type';
const NOTHING_WANTED = 'must not be empty: a webhook that wants no events should be deleted or disabled; null (or leaving it out) means every type';

/**
 * The subscription (src/events/type-patterns.ts): each bad entry named by its index, with
 * what is valid; stored as a set (each entry once, sorted). Null: every type.
 */
export const EventTypes = z
  .array(z.unknown(), { error: NOT_A_LIST })
  .min(1, { error: NOTHING_WANTED, abort: true })
  .max(MAX_EVENT_TYPE_ENTRIES, { error: `must have at most ${MAX_EVENT_TYPE_ENTRIES} entries`, abort: true })
  .superRefine((entries, ctx) => {
    const parsed = parseTypePatterns(entries);
    if ('problems' in parsed) for (const { index, message } of parsed.problems) ctx.addIssue({ code: 'custom', path: [index], message });
  })
  .transform((entries) => normalizeTypePatterns(entries as string[]))
  .nullish()
  .openapi({
    items: { type: 'string', enum: TYPE_PATTERNS },
    description: 'The events it receives: event types, family wildcards (`tracker.*`, `shipment.*`) and `*`. Left out or `null`: every type (on update, left out: unchanged). Stored as a set: each entry once, sorted. An empty list is refused.',
    example: ['tracker.*', 'batch.created'],
  });

export const WebhookCreate = z
  .object(
    {
      url: z
        .string({ error: (iss) => (iss.input === undefined || iss.input === null ? 'cannot be blank' : 'must be a string') })
        .max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`)
        .openapi({ description: 'https URL; without a scheme `https://` is assumed. `user:password@` sends Basic auth.', example: 'example.com/webhook' }),
      webhook_secret: Secret,
      custom_headers: CustomHeaderList.optional(),
      event_types: EventTypes,
    },
    { error: 'must be an object' },
  )
  .openapi('WebhookCreate');

export const CreateWebhookBody = z.object({ webhook: WebhookCreate }).openapi({ example: { webhook: { url: 'example.com/webhook', webhook_secret: 'sécret' } } });

const UPDATABLE = ['webhook_secret', 'custom_headers', 'event_types'] as const;
const updatable = { webhook_secret: Secret, custom_headers: CustomHeaderList.optional(), event_types: EventTypes };
/** What an update would quietly skip because of its shape: refused, with why (docs/api.md). */
const URL_FIXED = 'cannot be changed: create a webhook with the new URL, then delete this one';
const NOTHING_KNOWN = `changes nothing: the fields an update takes are ${UPDATABLE.join(', ')} (an empty body only re-enables)`;

/**
 * PATCH /webhooks/:id: the fields top-level (as the API specification has it), or
 * wrapped in `webhook` as create takes them (understood the same). Extra fields beside
 * a known one are ignored, as elsewhere; a body of only unknown fields, a `url`, or both
 * shapes at once would change nothing (or not what was asked) and are refused.
 */
export const UpdateWebhookBody = z
  .looseObject({ ...updatable, webhook: z.looseObject(updatable, { error: 'must be an object' }).optional().openapi({ description: 'The create body\'s shape, also understood: its fields as if sent top-level.' }) }, { error: 'must be a JSON object' })
  .superRefine((body, ctx) => {
    const known = (o: Record<string, unknown>) => UPDATABLE.some((f) => o[f] !== undefined);
    if ('url' in body) ctx.addIssue({ code: 'custom', path: ['url'], message: URL_FIXED });
    if (body.webhook && 'url' in body.webhook) ctx.addIssue({ code: 'custom', path: ['webhook', 'url'], message: URL_FIXED });
    if (body.webhook && known(body)) ctx.addIssue({ code: 'custom', path: ['webhook'], message: 'send the fields either top-level or inside `webhook`, not both' });
    const fields = body.webhook ?? body;
    const unknown = Object.keys(fields).filter((k) => !(k in updatable) && k !== 'webhook');
    if (unknown.length > 0 && !known(fields) && !('url' in fields)) ctx.addIssue({ code: 'custom', path: body.webhook ? ['webhook', unknown[0]!] : [unknown[0]!], message: NOTHING_KNOWN });
  })
  .transform((body) => {
    const fields = body.webhook ?? body;
    return { webhook_secret: fields.webhook_secret, custom_headers: fields.custom_headers, event_types: fields.event_types };
  })
  .openapi({ description: 'Top-level fields (or the same wrapped in `webhook`); any update re-enables a disabled webhook. `custom_headers` replaces the list; `event_types` replaces the subscription (`null`: every type again; left out: unchanged).', example: { webhook_secret: 'new secret' } });

export const WEBHOOK_INPUT: InputRules = { code: 'WEBHOOK.INVALID', message: 'The webhook could not be saved.' };

export const Webhook = z
  .strictObject({
    id: z.string().openapi({ example: 'hook_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }),
    object: z.literal('Webhook'),
    mode: Mode,
    url: z.string().openapi({ example: 'https://example.com/webhook' }),
    created_at: z.string().openapi({ format: 'date-time', example: '2026-01-31T12:00:00Z' }),
    disabled_at: z.string().nullable().openapi({ format: 'date-time' }),
    custom_headers: z.array(CustomHeader),
    event_types: z.array(z.string()).nullable().openapi({ description: 'The event types and patterns it receives, as stored (each once, sorted); `null`: every type.', example: ['batch.created', 'tracker.*'] }),
  })
  .openapi('Webhook');

export const WebhookList = z.strictObject({ webhooks: z.array(Webhook) }).openapi('WebhookList');

// ---- beyond the API specification: secret rotation, test events, health --------------

export const RotateSecretBody = z
  .object(
    {
      webhook_secret: z
        .string({ error: 'must be a string' })
        .min(1, 'must not be empty')
        .max(MAX_SECRET_LENGTH, `must be at most ${MAX_SECRET_LENGTH} characters`)
        .refine((s) => storable(s) && !/[\u0000-\u001f\u007f]/.test(s), 'must not contain control characters or unpaired UTF-16 surrogates')
        .nullish()
        .openapi({ description: 'The new secret; left out, one is generated (`whsec_` + 32 random bytes in base64).' }),
    },
    { error: 'must be a JSON object' },
  )
  .openapi('RotateSecretRequest');
export const ROTATE_SECRET_INPUT: InputRules = { code: 'WEBHOOK.INVALID', message: 'The webhook secret is invalid.' };

export const WebhookSecret = z
  .strictObject({
    object: z.literal('WebhookSecret'),
    webhook_id: z.string(),
    webhook_secret: z.string().openapi({ description: 'The new secret, shown this once.', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
    previous_secret_expires_at: z.string().nullable().openapi({ format: 'date-time', description: 'Until then the previous secret signs too (in `webhook-signature`); null when there was none.' }),
  })
  .openapi('WebhookSecret');

export const TestEventBody = z
  .object({ description: z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(', ')}` }).optional().openapi({ description: 'The event type; default `tracker.updated`.' }) }, { error: 'must be a JSON object' })
  .openapi('TestEventRequest');
export const TEST_EVENT_INPUT: InputRules = { code: 'WEBHOOK.EVENT.INVALID', message: 'Unknown event type.' };

export const WebhookHealth = z
  .strictObject({
    object: z.literal('WebhookHealth'),
    webhook_id: z.string(),
    status: z.enum(HEALTH_STATES).openapi({ description: '`waiting`: re-enabled, no attempt since. `failing`: a run of failed attempts is going on.' }),
    consecutive_failures: z.number().int().openapi({ description: 'Failed attempts in a row of the current run; 0 after a success or a re-enable.' }),
    failing_since: z.string().nullable().openapi({ format: 'date-time' }),
    disabled_at: z.string().nullable().openapi({ format: 'date-time' }),
    disabled_reason: z.enum(DISABLED_REASONS).nullable().openapi({ description: 'Why it is disabled: `endpoint_gone` (it answered 410 Gone) or `sustained_failures` (see `disabled_policy`); null when enabled.' }),
    disabled_policy: z
      .strictObject({ failures: z.number().int(), after: z.string().openapi({ example: '5d' }) })
      .nullable()
      .openapi({ description: 'For `sustained_failures`: the policy that applied: at least `failures` attempts in a row over at least `after`.' }),
    reenabled_at: z.string().nullable().openapi({ format: 'date-time', description: 'The last update that re-enabled it or ended its run of failures.' }),
    last_success_at: z.string().nullable().openapi({ format: 'date-time' }),
    last_failure_at: z.string().nullable().openapi({ format: 'date-time' }),
    last_failure_response_code: z.number().int().nullable().openapi({ description: '0: no response (timeout, connection error, refused address).' }),
    last_error: z.string().nullable().openapi({ description: 'What the last failed attempt got: the start of its response body; `HTTP 500, empty body` for an answer without one; `no response: <reason>` (a timeout, a refused connection) when none came.', example: 'HTTP 500, empty body' }),
    last_24h: z.strictObject({ attempts: z.number().int(), succeeded: z.number().int(), failed: z.number().int() }),
  })
  .openapi('WebhookHealth');
