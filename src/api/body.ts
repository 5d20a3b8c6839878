import type { Request } from 'express';

/** The JSON request body as sent (an absent body is an empty object); the operation's schema checks its shape. */
export function bodyOf(req: Request): unknown {
  return req.body === undefined ? {} : req.body;
}

/** The query as one string per parameter: a repeated one counts by its last value, a valueless `?page_size` as not given. */
export function queryParams(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(req.query)) {
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (typeof value === 'string' && value !== '') out[name] = value;
  }
  return out;
}
