import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test', 'production')`))
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('in_queue').check(sql`status in ('in_queue', 'retrying', 'completed', 'failed')`))
    .addColumn('result', 'jsonb', (c) => c.notNull())
    .addColumn('previous_attributes', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // Outbox: null until the delivery workflow was started; the worker's sweeper starts the rest.
    .addColumn('dispatched_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('events_user_mode_idx').on('events').columns(['user_id', 'mode', 'id']).execute();
  await sql`create index events_undispatched_idx on events (created_at) where dispatched_at is null`.execute(db);
  await sql`create index events_status_idx on events (status, id)`.execute(db);

  // One row per (event, webhook): where delivery of that event to that URL stands.
  // pending_urls/completed_urls of an Event are read from here.
  await db.schema
    .createTable('event_deliveries')
    .addColumn('event_id', 'text', (c) => c.notNull().references('events.id'))
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('pending').check(sql`state in ('pending', 'completed', 'failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('event_deliveries_pkey', ['event_id', 'webhook_id'])
    .execute();
  await db.schema.createIndex('event_deliveries_webhook_idx').on('event_deliveries').columns(['webhook_id', 'event_id']).execute();

  await db.schema
    .createTable('payloads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull().references('events.id'))
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('request_url', 'text', (c) => c.notNull())
    .addColumn('request_headers', 'jsonb', (c) => c.notNull())
    .addColumn('request_body', 'text', (c) => c.notNull())
    .addColumn('response_code', 'integer', (c) => c.notNull())
    .addColumn('response_headers', 'jsonb', (c) => c.notNull())
    .addColumn('response_body', 'text', (c) => c.notNull())
    .addColumn('total_time', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('payloads_event_idx').on('payloads').columns(['event_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('payloads').execute();
  await db.schema.dropTable('event_deliveries').execute();
  await db.schema.dropTable('events').execute();
}
