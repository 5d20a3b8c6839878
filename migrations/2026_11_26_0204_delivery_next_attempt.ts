import type { Kysely } from 'kysely';

/**
 * When a pending delivery's next attempt is planned, recorded with the failed attempt
 * that planned it (and cleared when the delivery succeeds or gives up), so the portal
 * can show it without asking Temporal on every page view.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('event_deliveries').addColumn('next_attempt_at', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('event_deliveries').dropColumn('next_attempt_at').execute();
}
