import type { Kysely } from 'kysely';

/**
 * Why a webhook was disabled (the health view says it): `disabled_reason` and, for
 * sustained failures, the policy that applied then (it may change later). The time
 * of the last re-enable, so the view can say the webhook waits for its next delivery
 * instead of reading old failures as a current one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('webhooks')
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_policy', 'jsonb')
    .addColumn('reenabled_at', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhooks').dropColumn('disabled_reason').dropColumn('disabled_policy').dropColumn('reenabled_at').execute();
}
