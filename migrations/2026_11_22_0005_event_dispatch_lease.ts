import type { Kysely } from 'kysely';

/**
 * The outbox dispatcher claims an event by setting a short lease, starts its
 * workflow with no lock held, then sets dispatched_at. A dispatcher that dies
 * between the two leaves a lease that expires, and another one starts the event.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('dispatch_lease_until', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').dropColumn('dispatch_lease_until').execute();
}
