import { type InputRules, z } from '../schema';
import { MODES } from './tables';

/** Request and response schemas of API keys (the API specification, 2.1, 2.2 and 4.1). */
export const Mode = z.enum(MODES, { error: `must be ${MODES.map((m) => `'${m}'`).join(' or ')}` }).openapi('Mode');

export const CreateKeyBody = z.object({ mode: Mode }, { error: 'must be a JSON object' }).openapi({ example: { mode: 'production' } });
export const KEY_INPUT: InputRules = { code: 'PARAMETER.REQUIRED', message: 'Missing or invalid required parameter.' };

export const ApiKey = z
  .strictObject({
    id: z.string().openapi({ example: 'ak_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }),
    object: z.literal('ApiKey'),
    mode: Mode,
    key: z.string().openapi({ example: 'shk_prod_…' }),
    created_at: z.string().openapi({ format: 'date-time', example: '2026-01-31T12:00:00Z' }),
    active: z.boolean(),
  })
  .openapi('ApiKey');

const ChildKeys = z.strictObject({ id: z.string(), keys: z.array(ApiKey), children: z.array(z.unknown()).max(0) }).openapi('ChildApiKeys');
export const ApiKeys = z.strictObject({ id: z.string(), keys: z.array(ApiKey), children: z.array(ChildKeys) }).openapi('ApiKeys');

export const Empty = z.strictObject({}).openapi('EmptyObject', { description: 'An empty object.' });
