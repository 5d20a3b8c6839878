import type { PageParams } from './db/paginate';
import { type IdPrefix, idPattern } from './ids';
import type { RequestPart } from './operation';
import { type InputRules, namingParameters, z } from './schema';

/**
 * The query of every paginated list (the API specification, 4.6), as a schema that
 * reads it into PageParams (db/paginate.ts runs the page):
 * - `page_size`: integer 1..100, default 20;
 * - `before_id`: records older than this id; `after_id`: records newer; not both;
 * - `start_datetime` / `end_datetime`: ISO 8601 (date or date-time, `Z` or an offset), inclusive bounds on `created_at`.
 */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const dateError = { message: 'must be an ISO 8601 datetime such as 2026-01-31T12:00:00Z', params: { code: 'DATE.PARSE.FAILURE' } } as const;

/** A valueless parameter (`?page_size&before_id=`) counts as not given: the node client sends them. */
const orEmpty = <T extends z.ZodType>(schema: T, description: string) =>
  z.union([schema, z.literal('')]).optional().openapi({ description: `${description} An empty value counts as not given.` });

const datetime = (description: string) =>
  orEmpty(
    z
      .string()
      .refine((v) => ISO_8601.test(v) && !Number.isNaN(new Date(v).getTime()), dateError)
      .openapi({ pattern: ISO_8601.source, example: '2026-01-31T12:00:00Z', description: 'ISO 8601: a date, or a date and time with `Z` or an offset.' }),
    description,
  );

const PAGE_INPUT: InputRules = { code: 'PARAMETER.FORBIDDEN', message: namingParameters('Invalid pagination parameter') };

/** The query of a list whose records have ids with this prefix. */
export function pageQuery(prefix: IdPrefix) {
  // Only before_id has an example: the two together are refused, so an example of each would make a request that is.
  const id = (description: string, example?: string) =>
    orEmpty(
      z
        .string()
        .regex(idPattern(prefix), `must be an id starting with ${prefix}_`)
        .openapi({ example }),
      description,
    );
  const schema = z
    .object({
      page_size: orEmpty(
        z
          .string()
          .regex(/^\d{1,3}$/, `must be an integer from 1 to ${MAX_PAGE_SIZE}`)
          .refine((v) => Number(v) >= 1 && Number(v) <= MAX_PAGE_SIZE, `must be an integer from 1 to ${MAX_PAGE_SIZE}`)
          .openapi({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, example: 20 } as object),
        'Records per page, 1 to 100 (default 20).',
      ),
      before_id: id('Records older than this id (the next page: the last id returned).', `${prefix}_0192f3a4b5c67d8e9f0a1b2c3d4e5f60`),
      after_id: id('Records newer than this id; not with `before_id`.'),
      start_datetime: datetime('Records created at or after this time.'),
      end_datetime: datetime('Records created at or before this time.'),
    })
    .refine((q) => !(q.before_id && q.after_id), { path: ['after_id'], message: 'cannot be used with before_id' })
    .transform(
      (q): PageParams => ({
        pageSize: q.page_size ? Number(q.page_size) : DEFAULT_PAGE_SIZE,
        beforeId: q.before_id || undefined,
        afterId: q.after_id || undefined,
        start: q.start_datetime ? new Date(q.start_datetime) : undefined,
        end: q.end_datetime ? new Date(q.end_datetime) : undefined,
      }),
    );
  return { schema, rules: PAGE_INPUT } satisfies RequestPart;
}

