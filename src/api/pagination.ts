import type { Request } from 'express';
import type { PageParams } from '../db/paginate';
import { ApiError } from '../errors/api-error';
import { hasPrefix, type IdPrefix } from '../ids';
import { queryParam } from './body';

/**
 * The one pagination helper (seed 4.6) for every paginated list.
 * - `page_size`: integer 1..100, default 20;
 * - `before_id`: records older than this id; `after_id`: records newer; not both;
 * - `start_datetime` / `end_datetime`: ISO 8601, inclusive bounds on `created_at`;
 * - newest first (or oldest first where the list says so); `has_more` is exact
 *   because one record beyond the page is fetched.
 */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export function pageParams(req: Request, prefix: IdPrefix): PageParams {
  const rawSize = queryParam(req, 'page_size');
  let pageSize = DEFAULT_PAGE_SIZE;
  if (rawSize !== undefined) {
    pageSize = /^\d+$/.test(rawSize) ? Number(rawSize) : NaN;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
      throw new ApiError('PARAMETER.FORBIDDEN', 'Invalid page_size.', [
        { field: 'page_size', message: `must be an integer from 1 to ${MAX_PAGE_SIZE}` },
      ]);
    }
  }
  const beforeId = queryParam(req, 'before_id');
  const afterId = queryParam(req, 'after_id');
  if (beforeId && afterId) {
    throw new ApiError('PARAMETER.FORBIDDEN', 'before_id and after_id cannot be used together.', [
      { field: 'after_id', message: 'cannot be used with before_id' },
    ]);
  }
  for (const [field, value] of [['before_id', beforeId], ['after_id', afterId]] as const) {
    if (value !== undefined && !hasPrefix(value, prefix)) {
      throw new ApiError('PARAMETER.FORBIDDEN', `Invalid ${field}.`, [{ field, message: `must be an id starting with ${prefix}_` }]);
    }
  }
  return {
    pageSize,
    beforeId,
    afterId,
    start: datetimeParam(req, 'start_datetime'),
    end: datetimeParam(req, 'end_datetime'),
  };
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function datetimeParam(req: Request, field: string): Date | undefined {
  const value = queryParam(req, field);
  if (value === undefined) return undefined;
  const date = ISO_8601.test(value) ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) {
    throw new ApiError('DATE.PARSE.FAILURE', `${field} is not an ISO 8601 datetime.`, [
      { field, message: 'must be an ISO 8601 datetime such as 2026-01-31T12:00:00Z' },
    ]);
  }
  return date;
}
