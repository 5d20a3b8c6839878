import { type Kysely, sql } from 'kysely';

/**
 * - `replays.user_id`, `mode`, `webhook_id`: a recovery (POST /v2/webhooks/:id/recover) is a
 *   replay narrowed to one webhook of one account and mode; its handle is read back only by
 *   that account and mode. Null for an operator's broad replay.
 * - `replays.ended_at`: when the last of its events was started again; set once, by the
 *   dispatcher that started it, so "ended" is logged once. Replays already done are ended.
 * - `events_owner_status_idx`: GET /v2/events?status=… pages one account's events of one
 *   status newest first without walking the others (failed ones are rare among many).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('replays')
    .addColumn('user_id', 'text', (c) => c.references('users.id'))
    .addColumn('mode', 'text', (c) => c.check(sql`mode in ('test', 'production')`))
    .addColumn('webhook_id', 'text', (c) => c.references('webhooks.id'))
    .addColumn('ended_at', 'timestamptz')
    .execute();
  await sql`update replays r set ended_at = r.created_at where not exists (select 1 from events e where e.replay_id = r.id)`.execute(db);
  await sql`create index events_owner_status_idx on events (user_id, mode, status, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index events_owner_status_idx`.execute(db);
  await db.schema.alterTable('replays').dropColumn('ended_at').dropColumn('webhook_id').dropColumn('mode').dropColumn('user_id').execute();
}
