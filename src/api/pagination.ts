import type { Request } from 'express';
import type { PageParams } from '../db/paginate';
import { parsePageQuery } from './pagination.schema';
import type { IdPrefix } from '../ids';
import { queryParams } from './body';

/** The one pagination helper (seed 4.6) for every paginated list; the rules are the schema's. */
export function pageParams(req: Request, prefix: IdPrefix): PageParams {
  return parsePageQuery(queryParams(req), prefix);
}
