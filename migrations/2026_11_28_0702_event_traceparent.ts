import { sql, type Kysely } from 'kysely';

/**
 * The trace an event was published in (a W3C `traceparent`), kept with it so the worker
 * that dispatches it continues that trace, and a replay links to it
 * (src/telemetry/stored-context.ts). Null when tracing is off. Nullable and without a
 * default: the table is not rewritten, and an api of the previous release still inserts
 * during a rolling deploy.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table events add column traceparent text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table events drop column traceparent`.execute(db);
}
