import { type Kysely, sql } from 'kysely';

/**
 * GET /v2/events?object_id=…, ?tracking_code=… (src/events/events.ts) page one account's
 * events about one object newest first, from an index each, alone or with the other filters.
 *
 * Expression indexes rather than generated columns: adding a stored generated column
 * rewrites the whole events table under an exclusive lock, and PostgreSQL cannot index a
 * virtual one; an index on the expression costs the same per publish, stores nothing in
 * the rows, and blocks only writes while it builds. Tracking codes are indexed upper-cased
 * (the filter matches in any case), and only for the events that have one (trackers,
 * shipments). `if not exists`: on a large table an operator may build them beforehand with
 * `create index concurrently` (publishing goes on meanwhile), and this migration keeps them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists events_object_idx on events (user_id, mode, (result->>'id'), id)`.execute(db);
  await sql`create index if not exists events_tracking_code_idx on events (user_id, mode, upper(result->>'tracking_code'), id) where result->>'tracking_code' is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index events_tracking_code_idx`.execute(db);
  await sql`drop index events_object_idx`.execute(db);
}
