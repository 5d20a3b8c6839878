import type { FieldErrors } from '../errors/api-error';
import type { CustomHeader } from '../db/tables/webhooks';

/**
 * Custom headers of a webhook (seed 2.3). Each of the seed's rules has its own
 * field error. Names the service sets itself are accepted (rule 7) but the
 * service's values win at delivery (see RESERVED_HEADERS).
 */
export const MAX_CUSTOM_HEADERS = 3;
export const MAX_HEADER_LENGTH = 999; // "fewer than 1000 characters"
export const BRAND_PREFIX = 'x-shiphook-';

/** Lower-case names of headers the service sets on every delivery; they override custom ones. */
export const RESERVED_HEADERS = new Set([
  'content-type', 'accept', 'user-agent', 'x-hmac-signature', 'authorization', 'webhook-id', 'webhook-timestamp', 'webhook-signature',
  'content-length', 'host', 'connection', 'transfer-encoding',
]);

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/; // RFC 9110 token
const ASCII = /^[\x20-\x7e\t]*$/; // printable ASCII (and tab): no CR, LF, NUL or other controls

export function validateCustomHeaders(input: unknown, errors: FieldErrors): CustomHeader[] {
  if (input === undefined || input === null) return [];
  if (!Array.isArray(input)) {
    errors.add('custom_headers', 'must be an array of {name, value} objects');
    return [];
  }
  if (input.length > MAX_CUSTOM_HEADERS) {
    errors.add('custom_headers', `must contain at most ${MAX_CUSTOM_HEADERS} headers`);
  }
  const seen = new Set<string>();
  const headers: CustomHeader[] = [];
  input.forEach((item: unknown, i) => {
    const field = `custom_headers[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      errors.add(field, 'must be an object with name and value');
      return;
    }
    const { name, value } = item as Record<string, unknown>;
    const nameOk = checkText(name, `${field}.name`, errors);
    const valueOk = checkText(value, `${field}.value`, errors);
    if (nameOk) {
      const n = name as string;
      if (!TOKEN.test(n)) errors.add(`${field}.name`, 'must be a valid HTTP header name (RFC 9110 token characters only)');
      else if (n.toLowerCase().startsWith(BRAND_PREFIX)) errors.add(`${field}.name`, 'must not start with X-Shiphook-, which is reserved for the service');
      else if (seen.has(n.toLowerCase())) errors.add(`${field}.name`, 'must be unique (names are case-insensitive)');
      seen.add(n.toLowerCase());
    }
    if (nameOk && valueOk) headers.push({ name: name as string, value: value as string });
  });
  return headers;
}

function checkText(value: unknown, field: string, errors: FieldErrors): boolean {
  if (typeof value !== 'string' || value === '') {
    errors.add(field, 'is required');
    return false;
  }
  if (!ASCII.test(value)) {
    errors.add(field, 'must contain printable ASCII characters only');
    return false;
  }
  if (value.length > MAX_HEADER_LENGTH) {
    errors.add(field, `must be fewer than ${MAX_HEADER_LENGTH + 1} characters`);
    return false;
  }
  return true;
}
