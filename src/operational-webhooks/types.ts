/**
 * The platform's own event types (operational events), with when each is emitted: what the
 * operator's endpoints receive about the customers' webhooks. Not the API specification's
 * types: kept out of the customer catalogue (src/events/types.ts), its validation and its
 * OpenAPI webhooks; the one list the operational endpoints' validation, the emitters and
 * docs/operations.md read.
 */
export const OPERATIONAL_EVENT_CATALOGUE = {
  'webhook.failing': 'A run of failed attempts began: the first failure after a success, a re-enable or the webhook\'s creation.',
  'webhook.recovered': 'An attempt succeeded after a run of failures: the run is over.',
  'webhook.disabled': 'The webhook was disabled: its endpoint answered 410 Gone, or its failures lasted as long as the disable policy allows.',
  'webhook.re_enabled': 'An update (PATCH /v2/webhooks/:id) re-enabled a disabled webhook or ended its run of failures.',
  'delivery.exhausted': 'A delivery used its last attempt and failed: the event will not reach that URL unless replayed.',
  'secret.rotated': 'A webhook\'s secret was rotated (POST /v2/webhooks/:id/rotate_secret) or replaced by an update.',
  'recovery.finished': 'A recovery (POST /v2/webhooks/:id/recover) started every event it matched again.',
} as const;

export type OperationalEventType = keyof typeof OPERATIONAL_EVENT_CATALOGUE;

export const OPERATIONAL_EVENT_TYPES = Object.keys(OPERATIONAL_EVENT_CATALOGUE) as OperationalEventType[];

/**
 * What an operational endpoint's `event_types` may hold, read as the customers' patterns are
 * (src/events/type-patterns.ts `matches`): `*`, a family wildcard (`webhook.*`), a type.
 */
export const OPERATIONAL_TYPE_PATTERNS: string[] = ['*', ...new Set(OPERATIONAL_EVENT_TYPES.map((type) => `${type.slice(0, type.lastIndexOf('.'))}.*`)), ...OPERATIONAL_EVENT_TYPES];
