import { z } from '../schema';

/**
 * Custom headers of a webhook (the API specification, 2.3), as a schema: each of its rules
 * has its own field error. `X-*` names the service also sets are accepted (rule 7)
 * and the service's values win at delivery (RESERVED_HEADERS); names that would
 * break or smuggle the request, and the other headers the service sets itself,
 * are refused at creation (FORBIDDEN_HEADERS).
 */
export const MAX_CUSTOM_HEADERS = 3;
export const MAX_HEADER_LENGTH = 999; // "fewer than 1000 characters"
export const BRAND_PREFIX = 'x-shiphook-';

/** Lower-case names of headers the service sets on every delivery; they override custom ones. */
export const RESERVED_HEADERS = new Set([
  'content-type', 'accept', 'user-agent', 'x-hmac-signature', 'authorization', 'webhook-id', 'webhook-timestamp', 'webhook-signature',
  'content-length', 'host', 'connection', 'transfer-encoding',
]);

/** Refused as custom header names: framing and hop-by-hop headers, and the non-`X-` ones the service sets. */
export const FORBIDDEN_HEADERS = new Set([
  'host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect',
  ...[...RESERVED_HEADERS].filter((name) => !name.startsWith('x-')),
]);

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/; // RFC 9110 token
const ASCII = /^[\x20-\x7e\t]*$/; // printable ASCII (and tab): no CR, LF, NUL or other controls

function headerText(problemOf: (value: string) => string | undefined = () => undefined) {
  return z.string({ error: (iss) => (iss.input === undefined || iss.input === null ? 'is required' : 'must be a string') }).superRefine((value, ctx) => {
    const problem =
      value === '' ? 'is required'
      : !ASCII.test(value) ? 'must contain printable ASCII characters only'
      : value.length > MAX_HEADER_LENGTH ? `must be fewer than ${MAX_HEADER_LENGTH + 1} characters`
      : problemOf(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

function nameProblem(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (!TOKEN.test(name)) return 'must be a valid HTTP header name (RFC 9110 token characters only)';
  if (lower.startsWith(BRAND_PREFIX)) return 'must not start with X-Shiphook-, which is reserved for the service';
  if (FORBIDDEN_HEADERS.has(lower) || lower.startsWith('proxy-')) return `must not be ${name}: the service sets it, or it would change how the request is framed`;
  return undefined;
}

export const CustomHeader = z
  .strictObject({
    name: headerText(nameProblem).openapi({ description: 'An RFC 9110 header name, fewer than 1000 ASCII characters; not `X-Shiphook-*`, `Host`, `Content-Length`, `Transfer-Encoding`, `Connection`, `Keep-Alive`, `Upgrade`, `TE`, `Trailer`, `Expect`, `Proxy-*`, `Content-Type`, `Accept`, `User-Agent`, `Authorization`, `Webhook-Id`, `Webhook-Timestamp`, `Webhook-Signature`.', example: 'X-Team' }),
    value: headerText().openapi({ description: 'Printable ASCII, fewer than 1000 characters. Stored in plaintext.', example: 'logistics' }),
  })
  .openapi('CustomHeader');

/** The request form: extra keys are ignored, null means an empty list. */
const CustomHeaderInput = z.object({ name: CustomHeader.shape.name, value: CustomHeader.shape.value }, { error: 'must be an object with name and value' });

export const CustomHeaderList = z
  .array(CustomHeaderInput, { error: 'must be an array of {name, value} objects' })
  .max(MAX_CUSTOM_HEADERS, `must contain at most ${MAX_CUSTOM_HEADERS} headers`)
  .superRefine((headers, ctx) => {
    const seen = new Set<string>();
    headers.forEach((h, i) => {
      const lower = h.name.toLowerCase();
      if (seen.has(lower)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: 'must be unique (names are case-insensitive)' });
      seen.add(lower);
    });
  })
  .nullish()
  .transform((headers) => headers ?? [])
  .openapi({ description: `At most ${MAX_CUSTOM_HEADERS}; names unique (case-insensitive). An update replaces the whole list.` });
