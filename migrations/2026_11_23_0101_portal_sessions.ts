import { type Kysely, sql } from 'kysely';

/**
 * Portal sessions: a link that opens the customer webhook portal for one key's user
 * and mode for a bounded time. Only the SHA-256 digest of the link's token is stored.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('portal_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_digest', 'bytea', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test', 'production')`))
    .addColumn('api_key_id', 'text', (c) => c.notNull().references('api_keys.id'))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('portal_sessions').execute();
}
