import type { Request } from 'express';
import { ApiError } from '../errors/api-error';

/** The JSON request body as an object (an absent body is an empty object). */
export function bodyOf(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError('BAD_REQUEST', 'The request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

/** A required nested object such as `{"user": {...}}`; missing → 422 PARAMETER.REQUIRED. */
export function objectParam(body: Record<string, unknown>, name: string): Record<string, unknown> {
  const value = body[name];
  if (value === undefined || value === null) {
    throw new ApiError('PARAMETER.REQUIRED', 'Missing required parameter.', [{ field: name, message: 'cannot be blank' }]);
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError('PARAMETER.REQUIRED', 'Missing required parameter.', [{ field: name, message: 'must be an object' }]);
  }
  return value as Record<string, unknown>;
}

/** A query parameter's value; a valueless `?page_size` counts as not given. */
export function queryParam(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (Array.isArray(value)) return queryParamValue(value[value.length - 1]);
  return queryParamValue(value);
}

function queryParamValue(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
