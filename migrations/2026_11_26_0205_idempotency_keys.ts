import { type Kysely, sql } from 'kysely';

/**
 * Idempotency-Key: the first answer to a request made with a key, per caller, for 24 hours
 * (src/idempotency/). Neither the key nor the request is stored: the key as a digest,
 * the request as a keyed digest, the answer encrypted under a key derived from the
 * Idempotency-Key (an API key's creation answers the key itself).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('key_digest', 'bytea', (c) => c.notNull())
    .addColumn('fingerprint', 'bytea', (c) => c.notNull())
    // Null while the first request is being answered.
    .addColumn('status', 'smallint')
    .addColumn('answer', 'bytea')
    .addColumn('locked_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pkey', ['scope', 'key_digest'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_at').on('idempotency_keys').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}
