import type { Kysely } from 'kysely';

/**
 * Consecutive failed attempts of a webhook, counted where they happen (one atomic
 * UPDATE per failure), so its health workflow is told only when a run of failures
 * starts and ends instead of once per failure. `failing_since` marks the start of
 * the run; both reset on the next success or when the webhook is updated.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhooks').dropColumn('consecutive_failures').execute();
}
