import { type Kysely, sql } from 'kysely';

/**
 * Listeners (`shiphook listen`): each is a row of `webhooks` (id `lst_…`, URL
 * `listen://lst_…`) that publish and the engine deliver to like any webhook, and a row
 * here with what only a listener has: when a stream of it was last open. Their attempts
 * wait in `listener_requests` for the CLI, which forwards each to the developer's machine
 * and answers it through the API; the server never connects anywhere for them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('listeners')
    .addColumn('id', 'text', (c) => c.primaryKey().references('webhooks.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test', 'production')`))
    .addColumn('forward_to', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('listeners_user_mode_idx').on('listeners').columns(['user_id', 'mode', 'id']).execute();
  await db.schema.createIndex('listeners_last_seen_idx').on('listeners').column('last_seen_at').execute();

  await db.schema
    .createTable('listener_requests')
    // The attempt's Payload id (X-Shiphook-Delivery-Id).
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('listener_id', 'text', (c) => c.notNull().references('listeners.id').onDelete('cascade'))
    .addColumn('request_headers', 'jsonb', (c) => c.notNull())
    .addColumn('request_body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('answered_at', 'timestamptz')
    .addColumn('response_code', 'integer')
    .addColumn('response_headers', 'jsonb')
    .addColumn('response_body', 'text')
    .addColumn('total_time', 'integer')
    .addColumn('error', 'text')
    .execute();
  await sql`create index listener_requests_waiting_idx on listener_requests (listener_id, id) where answered_at is null`.execute(db);
  await db.schema.createIndex('listener_requests_expires_idx').on('listener_requests').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('listener_requests').execute();
  await db.schema.dropTable('listeners').execute();
}
