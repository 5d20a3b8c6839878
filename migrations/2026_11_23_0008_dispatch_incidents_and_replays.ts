import { type Kysely, sql } from 'kysely';

/**
 * - `dispatch_failed_at` / `dispatch_error`: Temporal refused to start the event's
 *   workflow for a reason a retry cannot fix (invalid argument, a size limit). The
 *   dispatcher stops claiming it; an operator finds it and replays it, which clears both.
 * - `replays` and `events.replay_id`: a broad operator replay is one statement that
 *   marks the matching events for the dispatchers and returns a handle at once;
 *   its progress is counted from the events that still carry its id.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('events')
    .addColumn('dispatch_failed_at', 'timestamptz')
    .addColumn('dispatch_error', 'text')
    .addColumn('replay_id', 'text')
    .execute();
  await sql`create index events_dispatch_failed_idx on events (dispatch_failed_at, id) where dispatch_failed_at is not null`.execute(db);
  await sql`create index events_replay_idx on events (replay_id) where replay_id is not null`.execute(db);
  await db.schema
    .createTable('replays')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('filter', 'jsonb', (c) => c.notNull())
    .addColumn('matched', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('replays').execute();
  await sql`drop index events_replay_idx`.execute(db);
  await sql`drop index events_dispatch_failed_idx`.execute(db);
  await db.schema.alterTable('events').dropColumn('replay_id').dropColumn('dispatch_error').dropColumn('dispatch_failed_at').execute();
}
