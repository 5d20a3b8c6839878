import { type Kysely, sql } from 'kysely';

/**
 * A webhook's subscription: the event types and patterns it receives (`tracker.*`,
 * `*`, `batch.created`, as src/events/type-patterns.ts reads them); null receives every
 * type, as every webhook did before, so existing webhooks keep what they get.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('event_types', sql`text[]`).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhooks').dropColumn('event_types').execute();
}
