import type { Kysely } from 'kysely';

/**
 * Portal links work once: the first visit marks the link used and exchanges it for a
 * session whose own token lives only in the browser's cookie (its SHA-256 digest here).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('portal_sessions')
    .addColumn('link_used_at', 'timestamptz')
    .addColumn('session_digest', 'bytea', (c) => c.unique())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('portal_sessions').dropColumn('session_digest').dropColumn('link_used_at').execute();
}
