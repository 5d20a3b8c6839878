import { Mode } from '../account/api-keys.schema';
import { MODES } from '../account/tables';
import { type InputRules, NOT_STORABLE, storable, z } from '../schema';
import { EventTypes, MAX_SECRET_LENGTH, MAX_URL_LENGTH } from '../webhooks/webhooks.schema';

/** Request and response schemas of listeners (`shiphook listen`) and of what their streams send. */

/** The most of a local answer's body kept (as much as a webhook's answer: src/outbound/http-client.ts). */
export const MAX_ANSWER_BODY = 64 * 1024;
const MAX_ANSWER_HEADERS = 100;
const MAX_ANSWER_ERROR = 500;

const text = (max: number) => z.string({ error: 'must be a string' }).max(max, `must be at most ${max} characters`).refine(storable, NOT_STORABLE);

export const ListenerCreate = z
  .object(
    {
      forward_to: text(MAX_URL_LENGTH).nullish().openapi({ description: 'Where the CLI forwards, for the listener\'s views only: the server never connects to it.', example: 'http://localhost:4000/hook' }),
      event_types: EventTypes,
      secret: text(MAX_SECRET_LENGTH)
        .min(1, 'must not be empty')
        .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'must not contain control characters')
        .nullish()
        .openapi({ description: 'Signs what the listener gets, as a webhook\'s secret; left out, one is generated (`whsec_` + 32 random bytes in base64). The CLI keeps one, so it stays the same from run to run.' }),
      mode: z
        .enum(MODES, { error: `must be one of ${MODES.join(', ')}` })
        .optional()
        .openapi({ description: 'The mode of the events to forward: the key\'s. Default `test`; a production key must say `production`, so live events never reach a laptop by mistake.' }),
    },
    { error: 'must be an object' },
  )
  .openapi('ListenerCreate');

export const CreateListenerBody = z.object({ listener: ListenerCreate }).openapi({ example: { listener: { forward_to: 'http://localhost:4000/hook', event_types: ['tracker.*'] } } });
export const LISTENER_INPUT: InputRules = { code: 'PARAMETER.FORBIDDEN', message: 'The listener could not be created.' };

const listenerFields = {
  id: z.string().openapi({ example: 'lst_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }),
  object: z.literal('Listener'),
  mode: Mode,
  url: z.string().openapi({ description: 'How deliveries, Payloads and the Temporal UI name it.', example: 'listen://lst_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }),
  forward_to: z.string().nullable(),
  event_types: z.array(z.string()).nullable().openapi({ description: 'As a webhook\'s: the event types and patterns it receives; `null`: every type.' }),
  created_at: z.string().openapi({ format: 'date-time' }),
  last_seen_at: z.string().openapi({ format: 'date-time', description: 'When a stream of it was last open; it is removed once this is older than the grace period.' }),
};

export const Listener = z.strictObject(listenerFields).openapi('Listener');
export const NewListener = z
  .strictObject({ ...listenerFields, secret: z.string().openapi({ description: 'Its signing secret, shown this once.', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }) })
  .openapi('NewListener');
export const ListenerList = z.strictObject({ listeners: z.array(Listener) }).openapi('ListenerList');

/** The local endpoint's answer to one forwarded request, as the CLI read it. */
export const ListenerAnswerBody = z
  .object(
    {
      status: z.number({ error: 'must be a number' }).int('must be an integer').min(0, 'must be 0 to 599').max(599, 'must be 0 to 599').openapi({ description: 'The HTTP status; 0 when no answer came (`error` says why).' }),
      headers: z
        .record(z.string(), text(8192), { error: 'must be an object of strings' })
        .refine((h) => Object.keys(h).length <= MAX_ANSWER_HEADERS, `must have at most ${MAX_ANSWER_HEADERS} headers`)
        .optional(),
      body: text(MAX_ANSWER_BODY).optional().openapi({ description: `At most ${MAX_ANSWER_BODY / 1024} KiB, as for a webhook's answer.` }),
      total_time: z.number({ error: 'must be a number' }).int('must be an integer').min(0, 'must not be negative').openapi({ description: 'Milliseconds the local endpoint took.' }),
      error: text(MAX_ANSWER_ERROR).optional().openapi({ description: 'Why no answer came (status 0), e.g. `connection refused`.' }),
    },
    { error: 'must be a JSON object' },
  )
  .openapi('ListenerAnswer');
export const LISTENER_ANSWER_INPUT: InputRules = { code: 'PARAMETER.FORBIDDEN', message: 'The answer is invalid.' };

/** What a listener's stream sends: `ready` first, then a `request` per delivery attempt, and `gone` when it was removed. */
export const ListenerStreamEvent = z
  .union([
    z.strictObject({
      object: z.literal('ListenerReady'),
      listener_id: z.string(),
      heartbeat_ms: z.number().int().openapi({ description: 'How often the stream sends a keep-alive: a client that hears nothing for a few of these should reconnect.' }),
    }),
    z.strictObject({
      object: z.literal('ListenerRequest'),
      id: z.string().openapi({ description: 'The attempt\'s Payload id (`X-Shiphook-Delivery-Id`): answer it at POST /v2/listeners/{id}/requests/{request_id}/answer.' }),
      headers: z.record(z.string(), z.string()).openapi({ description: 'The signed request\'s headers, as a webhook gets them.' }),
      body: z.string().openapi({ description: 'The request body, byte for byte what the signatures cover.' }),
      expires_at: z.string().openapi({ format: 'date-time', description: 'The attempt\'s timeout: an answer after it is refused, and the retry schedule brings the event again.' }),
    }),
    z.strictObject({ object: z.literal('ListenerGone'), reason: z.string() }),
  ])
  .openapi('ListenerStreamEvent');
