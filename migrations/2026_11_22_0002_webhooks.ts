import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test', 'production')`))
    // As given (normalised); may carry user:password for Basic auth, masked whenever shown.
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('webhook_secret', 'text')
    .addColumn('custom_headers', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('disabled_at', 'timestamptz')
    // Set when a failed attempt was reported to the webhook's health workflow; the next
    // success clears it and reports the recovery (so healthy deliveries cost no signal).
    .addColumn('failing_since', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // Soft delete: in-flight deliveries must see that their webhook is gone.
    .addColumn('deleted_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('webhooks_user_mode_idx').on('webhooks').columns(['user_id', 'mode', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhooks').execute();
}
