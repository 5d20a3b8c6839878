import { normalizePhone, normalizeState, normalizeZip, PHONE, STATE, ZIP } from './addresses';
import { documented, EMAIL, type InputRules, MAX_TEXT, storable, trimmedPattern, z } from '../schema';
import { Mode } from '../account/api-keys.schema';

/**
 * The EndShipper address as a schema (the API specification, 2.5 and 7.2): a missing or malformed field
 * → ADDRESS.PARAMETERS.INVALID, a `country` that is not two letters →
 * ADDRESS.COUNTRY.INVALID, control characters → ADDRESS.PARAMETERS.INVALID_CHARACTER.
 */
const CONTROL = /[\u0000-\u001f\u007f]/;
const character = { code: 'ADDRESS.PARAMETERS.INVALID_CHARACTER' } as const;

// The document's patterns of the lines (before trimming, as sent): no control character once
// trimmed, and for a required line something left; a checked line's pattern is its check's.
const LINE_CHAR = '[^\\u0000-\\u001f\\u007f]';
const OPTIONAL_LINE = `^\\s*${LINE_CHAR}*\\s*$`;
const REQUIRED_LINE = `^\\s*${LINE_CHAR}*[^\\s\\u0000-\\u001f\\u007f]${LINE_CHAR}*\\s*$`;

/** A format rule of a line: the check, its message, and the document's pattern of what it takes. */
type Check = [(v: string) => boolean, string, string];

/** A required address line: trimmed, 1–255 characters, no control characters; `check` adds a format rule. */
function line(check?: Check, example?: string) {
  const text = optionalLine(check, example).unwrap().unwrap();
  return text.refine((v) => v !== '', { message: 'is required', abort: true, when: (p) => typeof p.value === 'string' }).openapi({ pattern: check?.[2] ?? REQUIRED_LINE });
}

/** An optional address line (absent, null or "" allowed). */
function optionalLine(check?: Check, example?: string) {
  return z
    .string({ error: (iss) => (iss.input === undefined || iss.input === null ? 'is required' : 'must be a string') })
    .trim()
    .refine((v) => !CONTROL.test(v), { message: 'contains a control character', params: character, abort: true })
    .refine(storable, { message: 'must not contain unpaired UTF-16 surrogates', abort: true })
    .max(MAX_TEXT, { message: `must be at most ${MAX_TEXT} characters`, abort: true })
    .refine((v) => v === '' || !check || check[0](v), check?.[1] ?? '')
    .openapi({ example, pattern: check?.[2] ?? OPTIONAL_LINE })
    .nullish();
}

export const EndShipperAddress = z
  .object(
    {
      name: optionalLine(undefined, 'Jack Sparrow').openapi({ description: 'Responsible person; `name` or `company` is required.' }),
      company: optionalLine(undefined, 'Black Pearl Shipping').openapi({ description: 'Responsible company; `name` or `company` is required.' }),
      street1: line(undefined, '388 Townsend St'),
      street2: optionalLine(undefined, 'Apt 20'),
      city: line(undefined, 'San Francisco'),
      state: line([(v) => normalizeState(v) !== undefined, 'must be a US state or its two-letter code', trimmedPattern(STATE)], 'CA'),
      zip: line([(v) => normalizeZip(v) !== undefined, 'must be a 5-digit ZIP or ZIP+4', ZIP.source], '94107'),
      country: line(undefined, 'US')
        .refine((v) => /^[A-Za-z]{2}$/.test(v), { message: 'must be a two-letter ISO country code', params: { code: 'ADDRESS.COUNTRY.INVALID' }, abort: true })
        .refine((v) => v.toUpperCase() === 'US', 'must be US: EndShippers are US addresses only')
        .openapi({ description: 'Two-letter ISO code; must be `US`.', pattern: '^\\s*[Uu][Ss]\\s*$' }),
      phone: line([(v) => normalizePhone(v) !== undefined, 'must be a 10-digit US phone number', PHONE.source], '415-555-0100'),
      email: line([(v) => EMAIL.test(v), 'must be an email address', trimmedPattern(EMAIL)], 'jack@example.com'),
    },
    { error: 'must be an object' },
  )
  // Runs even when other fields failed, so every missing field is listed at once.
  .refine((a) => Boolean(a.name || a.company), { path: ['name'], message: 'name or company is required', when: (p) => typeof p.value === 'object' && p.value !== null })
  .openapi('EndShipperAddress', documented({ anyOf: ['name', 'company'].map((f) => ({ required: [f], properties: { [f]: { type: 'string', pattern: REQUIRED_LINE } } })) }));

export const EndShipperBody = z.object({ address: EndShipperAddress }).openapi({
  example: { address: { name: 'Jack Sparrow', street1: '388 Townsend St', city: 'San Francisco', state: 'CA', zip: '94107', country: 'US', phone: '415-555-0100', email: 'jack@example.com' } },
});

export const ADDRESS_INPUT: InputRules = { code: 'ADDRESS.PARAMETERS.INVALID', message: 'Parameters required for the address are missing or invalid.', wrapper: 'address' };

export const EndShipper = z
  .strictObject({
    id: z.string().openapi({ example: 'es_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }),
    object: z.literal('EndShipper'),
    mode: Mode,
    name: z.string().nullable(),
    company: z.string().nullable(),
    street1: z.string(),
    street2: z.string().nullable(),
    city: z.string(),
    state: z.string(),
    zip: z.string(),
    country: z.string(),
    phone: z.string(),
    email: z.string(),
    created_at: z.string().openapi({ format: 'date-time', example: '2026-01-31T12:00:00+00:00' }),
    updated_at: z.string().openapi({ format: 'date-time', example: '2026-01-31T12:00:00+00:00' }),
  })
  .openapi('EndShipper');

export const EndShipperList = z.strictObject({ end_shippers: z.array(EndShipper), has_more: z.boolean() }).openapi('EndShipperList');
