import { type RawBuilder, sql } from 'kysely';

/**
 * Rows that were not deleted, of a table with soft deletes (`deleted_at`: users, API keys,
 * webhooks): `.where(notDeleted())`, `.where(notDeleted('w'))` where a join needs the
 * table named, or `${notDeleted('w')}` inside raw SQL. The one place the clause is
 * written, so a query of such a table says what it wants in one word.
 */
export function notDeleted(table?: string): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(table ? `${table}.deleted_at` : 'deleted_at')} is null`;
}
