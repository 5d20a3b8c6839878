import { sql, type Kysely } from 'kysely';

/**
 * Each Payload's attempt number (the `X-Shiphook-Attempt` its request carried). Added
 * on the partitioned parent, which adds it to every partition; nullable and without a
 * default, so the biggest table is not rewritten, a worker of the previous release
 * still inserts during a rolling deploy, and older Payloads say null rather than a
 * guessed number (a replay restarted the count, which they cannot tell).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table payloads add column attempt integer`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table payloads drop column attempt`.execute(db);
}
