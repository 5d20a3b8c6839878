import { type Kysely, sql } from 'kysely';

/**
 * Request counters of the API's rate limits (`rate-limiter-flexible`'s PostgreSQL
 * store, shared by every api process and replica). UNLOGGED: a counter lives a
 * second or a minute, so it needs no WAL and no crash safety — after a crash the
 * limits simply start afresh. The library deletes expired rows itself.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create unlogged table rate_limit_counters (key varchar(255) primary key, points integer not null default 0, expire bigint)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rate_limit_counters').execute();
}
