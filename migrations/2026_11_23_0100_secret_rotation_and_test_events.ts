import { type Kysely, sql } from 'kysely';

/**
 * Secret rotation with a grace period: the previous secret keeps signing (beside the
 * new one, in `webhook-signature`) until it expires. Test events: delivered to one
 * webhook only and marked for receivers. Per-webhook attempt lookups (health, the
 * portal's numbers) need payloads by webhook.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('webhooks')
    .addColumn('previous_webhook_secret', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    .execute();
  await db.schema.alterTable('events').addColumn('test', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  await sql`create index payloads_webhook_idx on payloads (webhook_id, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index payloads_webhook_idx`.execute(db);
  await db.schema.alterTable('events').dropColumn('test').execute();
  await db.schema.alterTable('webhooks').dropColumn('previous_webhook_secret').dropColumn('previous_secret_expires_at').execute();
}
