import { MODES } from '../account/tables';
import { EVENT_STATUSES } from '../events/tables';
import { hasPrefix } from '../ids';
import { type InputRules, z } from '../schema';

/** Request and response schemas of replay (one event's, and the operators' broad one): the one validation of each. */

export const ReplayBody = z
  .object(
    {
      all: z.boolean({ error: 'must be true or false' }).nullish(),
      webhook_id: z
        .string({ error: 'must be a webhook or listener id' })
        .refine((id) => hasPrefix(id, 'hook') || hasPrefix(id, 'lst'), 'must be a webhook or listener id')
        .nullish()
        .openapi({ description: 'Deliver to this webhook (or listener) only, even if it acknowledged the event already; it must be enabled and take the event\'s type now.' }),
    },
    { error: 'must be a JSON object' },
  )
  .refine((body) => !(body.all && body.webhook_id), { path: ['webhook_id'], message: 'give `all` or `webhook_id`, not both' })
  .openapi('ReplayRequest', { description: 'Without `all` or `webhook_id`: redeliver to the URLs not yet acknowledged; with `all: true` to every webhook enabled now that takes the event\'s type (acknowledged or not); with `webhook_id` to that one.' });
export const REPLAY_INPUT: InputRules = { code: 'PARAMETER.FORBIDDEN', message: 'Invalid parameter.' };

/** Events one broad replay marks at most (oldest first); run it again, narrowed, for more. */
export const MAX_BULK_REPLAY = 10_000;

const datetime = z
  .string()
  .refine((s) => !Number.isNaN(new Date(s).getTime()), { message: 'must be an ISO 8601 datetime', params: { code: 'DATE.PARSE.FAILURE' } })
  // Kept (and shown in the Replay's `filter`) as the instant it names.
  .transform((s) => new Date(s).toISOString())
  .optional()
  .openapi({ format: 'date-time' });

const FILTERS = 'status, user_id, webhook_id, since, until, dispatch_failed';

export const BulkReplayBody = z
  .object(
    {
      status: z.enum(EVENT_STATUSES).optional(),
      user_id: z.string().refine((id) => hasPrefix(id, 'user'), 'must be a user id').optional(),
      webhook_id: z.string().refine((id) => hasPrefix(id, 'hook'), 'must be a webhook id').optional(),
      since: datetime,
      until: datetime,
      dispatch_failed: z
        .boolean()
        .refine((only) => only, 'must be true (or left out)')
        .optional()
        .openapi({ description: 'Only the dispatch incidents (events whose workflow start Temporal refused).' }),
    },
    { error: 'must be a JSON object' },
  )
  .refine((filter) => Object.values(filter).some((v) => v !== undefined), { path: ['status'], message: `give at least one filter (${FILTERS})` })
  .openapi('BulkReplayRequest', { description: `At least one filter; at most ${MAX_BULK_REPLAY.toLocaleString('en-US')} events per replay, oldest first.` });
export const BULK_REPLAY_INPUT: InputRules = { code: 'PARAMETER.REQUIRED', message: 'The replay filter is invalid.' };
/** A broad replay's filter, as the schema checked it. */
export type ReplayFilter = z.output<typeof BulkReplayBody>;

export const Replay = z
  .strictObject({
    id: z.string().openapi({ example: 'replay_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }),
    object: z.literal('Replay'),
    status: z.enum(['running', 'done']),
    matched: z.number().int(),
    started: z.number().int().openapi({ description: 'Matched events whose delivery workflow the dispatchers started again.' }),
    remaining: z.number().int(),
    capped: z.boolean().openapi({ description: 'More events matched than one replay takes; narrow the filter and replay again.' }),
    filter: z.record(z.string(), z.unknown()),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Replay', { description: 'A broad replay, carried out by the workers\' dispatchers.' });

export const DispatchIncidentList = z
  .strictObject({
    events: z.array(
      z.strictObject({
        id: z.string(),
        user_id: z.string(),
        mode: z.enum(MODES),
        description: z.string(),
        status: z.enum(EVENT_STATUSES),
        dispatch_failed_at: z.string().openapi({ format: 'date-time' }),
        dispatch_error: z.string().nullable(),
      }),
    ),
  })
  .openapi('DispatchIncidentList');
