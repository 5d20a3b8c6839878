import { type Kysely, sql } from 'kysely';

/**
 * Operational events (src/operational-webhooks/) that could be emitted twice for one state
 * change — the start of a run of failures, noticed by each attempt's follow-up and by the
 * health workflow; a delivery's last attempt, which a retried activity can make again — are
 * emitted once per key. A key goes with its event (retention removes old events): the
 * foreign key is checked at commit, since the key is claimed before the event is written.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table operational_event_keys (
      key text primary key,
      event_id text not null references events (id) on delete cascade deferrable initially deferred,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index operational_event_keys_event_idx on operational_event_keys (event_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table operational_event_keys`.execute(db);
}
