import { type InputRules, z } from '../schema';

/** Request and response schemas of a webhook's recovery (POST /v2/webhooks/:id/recover); the rules are in recovery.ts beside it. */

const datetime = (description: string, example: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be an ISO 8601 datetime such as 2026-01-31T12:00:00Z') })
    .refine((s) => !Number.isNaN(new Date(s).getTime()), { message: 'must be an ISO 8601 datetime such as 2026-01-31T12:00:00Z', params: { code: 'DATE.PARSE.FAILURE' } })
    .transform((s) => new Date(s))
    .openapi({ type: 'string', format: 'date-time', example, description });

export const RecoverBody = z
  .object(
    {
      // Examples that make a window (since before until) within the widest one.
      since: datetime('Redeliver the events created at or after this time.', '2026-01-31T12:00:00Z'),
      until: datetime('…and before this time; default (and at most): now.', '2026-01-31T18:00:00Z').nullish(),
    },
    { error: 'must be a JSON object' },
  )
  .openapi('RecoverRequest', { description: 'A window of event creation times, at most `SHIPHOOK_RECOVERY_MAX_WINDOW` wide (default 14 days).' });
export const RECOVER_INPUT: InputRules = { code: 'PARAMETER.REQUIRED', message: 'The recovery window is invalid.' };

const stamp = z.string().openapi({ format: 'date-time' });

export const Recovery = z
  .strictObject({
    id: z.string().openapi({ example: 'replay_0192f3a4b5c67d8e9f0a1b2c3d4e5f60', description: 'A recovery is a replay narrowed to one webhook: its id starts with `replay_`.' }),
    object: z.literal('Recovery'),
    webhook_id: z.string(),
    since: stamp,
    until: stamp,
    status: z.enum(['running', 'done']).openapi({ description: '`done` once every matched event was started again; its deliveries then go on as usual (see `undelivered`).' }),
    matched: z.number().int().openapi({ description: 'Events whose delivery to this webhook had not succeeded when the recovery started.' }),
    started: z.number().int().openapi({ description: 'Matched events whose redelivery was started.' }),
    remaining: z.number().int(),
    capped: z.boolean().openapi({ description: 'More events matched than one recovery takes (the oldest were taken); once it is done, recover the same window again for the rest.' }),
    undelivered: z.number().int().openapi({ description: 'Now: events of the window whose delivery to this webhook has not succeeded yet (0 once everything arrived).' }),
    created_at: stamp,
    ended_at: stamp.nullable().openapi({ description: 'When the last matched event was started again.' }),
  })
  .openapi('Recovery', { description: 'Redelivery to one webhook of what it missed in a window.' });
export type RecoveryView = z.output<typeof Recovery>;
