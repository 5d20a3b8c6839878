import { type InputRules, storable, z } from '../schema';
import { pageQuery } from '../pagination';
import type { RequestPart } from '../operation';
import { DeliveredEvent, Event, EventStatus, EventSummary } from '../events/events.schema';
import { EVENT_STATUSES } from '../events/tables';
import { MAX_SECRET_LENGTH, WebhookCreate } from '../webhooks/webhooks.schema';
import { DISABLED_REASONS } from '../webhooks/tables';
import { OPERATIONAL_EVENT_TYPES, OPERATIONAL_TYPE_PATTERNS } from './types';

/** Request and response schemas of operational endpoints and events (the operator API, /admin/v1). */

const PATTERNS_TEXT = `each entry is an operational event type (${OPERATIONAL_EVENT_TYPES.join(', ')}), a family wildcard (webhook.*) or * for every type`;

/** As a customer webhook's `event_types`, over the operational types: a set, each bad entry named by its index; null: every type. */
const EventTypes = z
  .array(z.enum(OPERATIONAL_TYPE_PATTERNS as [string, ...string[]], { error: (iss) => `${JSON.stringify(iss.input)} is not an operational event type or pattern: ${PATTERNS_TEXT}` }), { error: `must be a list: ${PATTERNS_TEXT}; null (or leaving it out) for every type` })
  .min(1, 'must not be empty: null (or leaving it out) means every type')
  .max(OPERATIONAL_TYPE_PATTERNS.length, `must have at most ${OPERATIONAL_TYPE_PATTERNS.length} entries`)
  .transform((entries) => [...new Set(entries)].sort())
  .nullish()
  .openapi({ items: { type: 'string', enum: OPERATIONAL_TYPE_PATTERNS }, description: 'The operational events it receives: types, family wildcards (`webhook.*`) and `*`. Left out or `null`: every type (on update, left out: unchanged). Stored as a set.', example: ['webhook.disabled', 'delivery.*'] });

const Secret = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(MAX_SECRET_LENGTH, `must be at most ${MAX_SECRET_LENGTH} characters`)
  .refine((s) => storable(s) && !/[\u0000-\u001f\u007f]/.test(s), 'must not contain control characters or unpaired UTF-16 surrogates')
  .optional();

export const NewOperationalWebhook = z
  .object(
    {
      url: WebhookCreate.shape.url.openapi({ description: 'https URL, under the rules of customers\' webhooks (public addresses unless SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS). `user:password@` sends Basic auth.', example: 'https://ops.example.com/shiphook' }),
      webhook_secret: Secret.openapi({ description: 'The signing secret; left out, one is generated (`whsec_…`). Answered this once.' }),
      event_types: EventTypes,
    },
    { error: 'must be a JSON object' },
  )
  .openapi('NewOperationalWebhook');

export const OperationalWebhookUpdate = z
  .looseObject({ webhook_secret: Secret.openapi({ description: 'Replaces the secret at once.' }), event_types: EventTypes }, { error: 'must be a JSON object' })
  // As a customer's webhook: an update that names a URL would quietly keep the old one.
  .superRefine((body, ctx) => {
    if ('url' in body) ctx.addIssue({ code: 'custom', path: ['url'], message: 'cannot be changed: register an endpoint with the new URL, then delete this one' });
  })
  .openapi('OperationalWebhookUpdate', { description: 'Any update re-enables a disabled endpoint.' });

export const OPERATIONAL_WEBHOOK_INPUT: InputRules = { code: 'WEBHOOK.INVALID', message: 'The operational webhook could not be saved.' };

const stamp = z.string().openapi({ format: 'date-time' });

const endpointFields = {
  id: z.string().openapi({ example: 'hook_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }),
  object: z.literal('OperationalWebhook'),
  url: z.string().openapi({ description: 'Credentials masked.', example: 'https://ops.example.com/shiphook' }),
  event_types: z.array(z.string()).nullable().openapi({ description: 'As stored (each once, sorted); `null`: every type.' }),
  created_at: stamp,
  disabled_at: stamp.nullable(),
  disabled_reason: z.enum(DISABLED_REASONS).nullable().openapi({ description: 'Why it is disabled (`endpoint_gone`, `sustained_failures`): the customers\' rules apply; an update re-enables it.' }),
};
export const OperationalWebhook = z.strictObject(endpointFields).openapi('OperationalWebhook');
export const CreatedOperationalWebhook = z
  .strictObject({ ...endpointFields, webhook_secret: z.string().openapi({ description: 'The signing secret, shown this once.', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }) })
  .openapi('CreatedOperationalWebhook');
export const OperationalWebhookList = z.strictObject({ operational_webhooks: z.array(OperationalWebhook) }).openapi('OperationalWebhookList');

// ---- the operational events ---------------------------------------------------------

const OperationalEventType = z.enum(OPERATIONAL_EVENT_TYPES, { error: `must be one of ${OPERATIONAL_EVENT_TYPES.join(', ')}` }).openapi('OperationalEventType');

export const OperationalEventSummary = z.strictObject({ ...EventSummary.shape, description: OperationalEventType }).openapi('OperationalEventSummary');
export const OperationalEventList = z.strictObject({ events: z.array(OperationalEventSummary), has_more: z.boolean() }).openapi('OperationalEventList');
export const OperationalEvent = z
  .strictObject({ ...DeliveredEvent.shape, description: OperationalEventType })
  .openapi('OperationalEvent', { description: 'An operational event as its endpoints receive it: `result` is about a customer\'s webhook (docs/operations.md, Operational webhooks).' });
export const ReplayedOperationalEvent = z.strictObject({ ...Event.shape, description: OperationalEventType }).openapi('ReplayedOperationalEvent', { description: 'The event as the replay left it, without `result`.' });

/** An empty value counts as not given, as the page parameters do. */
const orEmpty = <C extends z.ZodType>(schema: C, description: string, error: string) =>
  z.union([schema, z.literal('')], { error }).optional().openapi({ description: `${description} An empty value counts as not given.` });

/** GET /operational_events: the page parameters and three filters, combinable. */
const eventPage = pageQuery('evt');
export const OPERATIONAL_EVENT_QUERY = {
  schema: eventPage.schema.in
    .safeExtend({
      status: orEmpty(EventStatus, 'Only events with this status.', `must be one of ${EVENT_STATUSES.join(', ')}`),
      description: orEmpty(OperationalEventType, 'Only events of this type.', `must be one of ${OPERATIONAL_EVENT_TYPES.join(', ')}`),
      webhook_id: orEmpty(z.string().regex(/^hook_[0-9a-f]{32}$/, 'must be a webhook id').openapi({ example: 'hook_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }), 'Only events about this customer webhook (their `result.id`).', 'must be a webhook id'),
    })
    .transform(({ status, description, webhook_id, ...page }) => ({
      page: eventPage.schema.out.parse(page),
      filter: { status: status || undefined, description: description || undefined, objectId: webhook_id || undefined },
    })),
  rules: eventPage.rules,
} satisfies RequestPart;
