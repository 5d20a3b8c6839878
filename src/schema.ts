import { extendZodWithOpenApi, type ZodOpenAPIMetadata } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ApiError } from './errors/api-error';
import type { ErrorCode } from './errors/catalogue';

/**
 * The schema toolkit every resource's request and response schemas are built
 * from (zod 4; the OpenAPI document is generated from the same definitions, see
 * api/openapi.ts), and the one mapping from a schema failure to the API's error
 * body. Limits on free-form input live here so every resource has the same ones.
 */
extendZodWithOpenApi(z);
export { z };

/**
 * JSON Schema keywords of OpenAPI 3.1 that zod-to-openapi's types leave out and its generator
 * copies as given: a rule a refinement checks, said in the document (`dependentRequired`, `anyOf`
 * of required sets, `not`).
 */
export const documented = (keywords: {
  dependentRequired?: Record<string, string[]>;
  anyOf?: object[];
  not?: object;
  required?: string[];
  properties?: Record<string, object>;
}): Partial<ZodOpenAPIMetadata> =>
  keywords as Partial<ZodOpenAPIMetadata>;

/** An email address, as every resource checks one (after trimming). */
export const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The document's pattern of a value checked with `re` after trimming: `re`, with white space around it. */
export const trimmedPattern = (re: RegExp) => `^\\s*(?:${re.source.replace(/^\^|\$$/g, '')})\\s*$`;

/** Free-form JSON (shipment `options`, event `result` and `previous_attributes`): at most this deep… */
export const MAX_JSON_DEPTH = 32;
/** …and strings inside it at most this long. */
export const MAX_JSON_STRING = 10_000;
/** Names, addresses, phone numbers, emails, references: short text. */
export const MAX_TEXT = 255;

/** A string PostgreSQL can store and a client can read back: no NUL, no lone UTF-16 surrogate. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
export const storable = (s: string) => !s.includes('\u0000') && !LONE_SURROGATE.test(s);
export const NOT_STORABLE = 'must not contain NUL characters or unpaired UTF-16 surrogates';

/** What text that must not be blank holds: a character that trimming keeps (the document's `pattern`; trim() removes exactly \s). */
export const NOT_BLANK = /\S/;

/** Text that is required: absent, null or (after trimming) empty says `blank`. */
export function requiredText(max = MAX_TEXT, blank = 'is required') {
  return z
    .string({ error: (iss) => (iss.input === undefined || iss.input === null ? blank : 'must be a string') })
    .trim()
    .min(1, blank)
    .max(max, `must be at most ${max} characters`)
    .refine(storable, NOT_STORABLE)
    .openapi({ pattern: NOT_BLANK.source });
}

/** Optional text; null is allowed and means "no value". */
export function optionalText(max = MAX_TEXT) {
  return z
    .string({ error: 'must be a string' })
    .trim()
    .max(max, `must be at most ${max} characters`)
    .refine(storable, NOT_STORABLE)
    .nullish();
}

/** A non-negative dollar amount as the API specification writes money: a string ("10.00"); numbers are accepted too. */
export const MAX_DOLLARS = 1e9;
/** Below MAX_DOLLARS (at most 9 digits before the point), at most 10 decimals. */
const DOLLARS = /^\d{1,9}(\.\d{1,10})?$/;
export function dollarAmount() {
  return z
    .union([z.string().openapi({ pattern: DOLLARS.source }), z.number().openapi({ minimum: 0, exclusiveMaximum: MAX_DOLLARS })], { error: 'must be a non-negative dollar amount' })
    .refine((v) => DOLLARS.test(String(v)), {
      error: `must be a non-negative dollar amount below ${MAX_DOLLARS} with at most 10 decimals`,
    })
    .openapi({ example: '10.00', description: `Dollars, 0 to ${MAX_DOLLARS}, at most 10 decimals, as a string (a JSON number is accepted too).` });
}

/** A JSON object of any shape, bounded in depth and string length, storable in PostgreSQL. */
export function freeFormObject(description: string) {
  return z
    .record(z.string(), z.unknown(), { error: 'must be an object' })
    .superRefine((value, ctx) => {
      const problem = freeFormProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .openapi({ description: `${description} Any JSON object, at most ${MAX_JSON_DEPTH} levels deep, strings at most ${MAX_JSON_STRING} characters.` });
}

/** Why a free-form value cannot be kept, or undefined. Iterative: a deep value cannot overflow the stack here. */
function freeFormProblem(root: unknown): string | undefined {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.length > MAX_JSON_STRING) return `strings must be at most ${MAX_JSON_STRING} characters`;
      if (!storable(value)) return NOT_STORABLE;
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) return 'numbers must be finite';
    } else if (value !== null && typeof value === 'object') {
      if (depth > MAX_JSON_DEPTH) return `must be at most ${MAX_JSON_DEPTH} levels deep`;
      for (const [key, child] of Object.entries(value)) {
        if (!storable(key)) return NOT_STORABLE;
        stack.push([child, depth + 1]);
      }
    }
  }
  return undefined;
}

// ---- schema failure → the API's error body ----------------------------------------

export interface InputRules {
  /** The catalogue code of a failure; an issue may name its own with `params: {code}`. */
  code: ErrorCode;
  /** Fixed, or made from the problems listed (a query's names each bad parameter: `namingParameters`). */
  message?: string | ((problems: FieldProblem[]) => string);
  /** The request's wrapper object (`{"webhook": {…}}`): missing → 422 PARAMETER.REQUIRED; fields are named with it (`webhook.url`), as the client sent them. */
  wrapper?: string;
  /** Codes of whole parts of the input, by the first field inside the wrapper (`parcel` → PARCEL.PARAMETERS.INVALID). */
  fieldCodes?: Record<string, ErrorCode>;
}

type FieldProblem = { field: string; message: string };

/** A message that names each bad parameter and what it takes: `Invalid query parameter: status must be one of …`. */
export const namingParameters =
  (what: string) =>
  (problems: FieldProblem[]): string =>
    `${what}: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}.`;

/** Parses `input`; a failure becomes an ApiError with one `{field, message}` per problem. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, rules: InputRules): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw schemaError(result.error.issues, rules, input);
}

/**
 * One mapping for every operation: the first problem's code wins (each issue has
 * the operation's code unless it names its own), and every problem with that code
 * is listed once, its field written as the client sent it: `webhook.custom_headers[1].name`,
 * `shipment.parcel.weight`, `page_size`.
 */
export function schemaError(issues: readonly z.core.$ZodIssue[], rules: InputRules, input: unknown): ApiError {
  const wrapperIssue = rules.wrapper ? issues.find((i) => i.path.length === 0 || (i.path.length === 1 && i.path[0] === rules.wrapper)) : undefined;
  if (rules.wrapper && wrapperIssue) {
    const value = typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>)[rules.wrapper] : undefined;
    const blank = value === undefined || value === null;
    return new ApiError('PARAMETER.REQUIRED', 'Missing required parameter.', [{ field: rules.wrapper, message: blank ? 'cannot be blank' : 'must be an object' }]);
  }
  const inside = (i: z.core.$ZodIssue) => (rules.wrapper && i.path[0] === rules.wrapper ? i.path.slice(1) : i.path);
  const codeOf = (i: z.core.$ZodIssue) =>
    (i as { params?: { code?: ErrorCode } }).params?.code ?? rules.fieldCodes?.[String(inside(i)[0])] ?? rules.code;
  const code = codeOf(issues[0]!);
  const details = distinct(issues.filter((i) => codeOf(i) === code).map((i) => ({ field: fieldOf(i.path), message: i.message })));
  return new ApiError(code, typeof rules.message === 'function' ? rules.message(details) : rules.message, details);
}

/**
 * A handler's field error (the domain names fields inside the wrapper: `url`,
 * `email`) as the client sent them: `webhook.url`, `user.email`.
 */
export function fieldsAsSent(err: unknown, rules: InputRules | undefined): unknown {
  const wrapper = rules?.wrapper;
  if (!wrapper || !(err instanceof ApiError) || !err.errors.some((d) => typeof d !== 'string')) return err;
  const errors = err.errors.map((d) => (typeof d === 'string' || d.field === wrapper || d.field.startsWith(`${wrapper}.`) ? d : { ...d, field: `${wrapper}.${d.field}` }));
  return new ApiError(err.code, err.message, errors);
}

/** Several checks of one field may fail alike (a pattern and a range): each problem is listed once. */
function distinct(details: FieldProblem[]): FieldProblem[] {
  const seen = new Set<string>();
  return details.filter((d) => {
    const key = `${d.field}\u0000${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function fieldOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : out ? `.${String(part)}` : String(part);
  return out || 'body';
}
