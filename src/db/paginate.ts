import { type SelectQueryBuilder, sql } from 'kysely';

/** One page request, parsed from the query string by api/pagination.ts. */
export interface PageParams {
  pageSize: number;
  beforeId?: string;
  afterId?: string;
  start?: Date;
  end?: Date;
}

/**
 * Runs `query` (already scoped by user and mode) for one page. `table` names the
 * table whose `id` and `created_at` columns scope and order the page.
 */
export async function paginate<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  table: string,
  params: PageParams,
  order: 'newest' | 'oldest' = 'newest',
): Promise<{ items: O[]; has_more: boolean }> {
  const id = sql.ref(`${table}.id`);
  const createdAt = sql.ref(`${table}.created_at`);
  let q = query;
  if (params.beforeId) q = q.where(sql<boolean>`${id} < ${params.beforeId}`);
  if (params.afterId) q = q.where(sql<boolean>`${id} > ${params.afterId}`);
  if (params.start) q = q.where(sql<boolean>`${createdAt} >= ${params.start}`);
  if (params.end) q = q.where(sql<boolean>`${createdAt} <= ${params.end}`);
  const rows = await q
    .orderBy(sql`${id} ${sql.raw(order === 'newest' ? 'desc' : 'asc')}`)
    .limit(params.pageSize + 1)
    .execute();
  return { items: rows.slice(0, params.pageSize), has_more: rows.length > params.pageSize };
}
