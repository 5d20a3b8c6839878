import { type Kysely, sql } from 'kysely';

/**
 * A webhook's delivery discipline (src/engine/webhook-rate-limit.ts, src/engine/ordering.ts):
 * - `webhooks.rate_limit`: deliveries per second (1–1,000), null for none; `ordering`:
 *   `none` (every webhook so far) or `per_object`.
 * - `webhook_rate_slots`: one row per limited webhook: the next free slot of its queue
 *   (`next_at`) and the last send time taken (`sent_at`), each moved by one UPDATE, so every
 *   worker process shares one schedule. Logged, unlike the API's counters: after a crash the
 *   reserved slots of held deliveries must still count.
 * - `delivery_turns`: per ordered webhook and object, the event whose delivery has its
 *   turn; the primary key is what lets only one have it. The row goes with its event.
 * - `event_deliveries.waiting_for`: why a pending delivery is not being sent, for the
 *   portal: `rate_limit`, or the id of the earlier event about the same object it waits
 *   for. Nullable without a default: adding it rewrites nothing.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table webhooks
    add column rate_limit integer check (rate_limit between 1 and 1000),
    add column ordering text not null default 'none' check (ordering in ('none', 'per_object'))`.execute(db);
  await sql`create table webhook_rate_slots (
    webhook_id text primary key references webhooks (id) on delete cascade,
    next_at timestamptz not null,
    sent_at timestamptz)`.execute(db);
  await sql`create table delivery_turns (
    webhook_id text not null,
    object_id text not null,
    event_id text not null references events (id) on delete cascade,
    primary key (webhook_id, object_id))`.execute(db);
  await sql`create index delivery_turns_event_idx on delivery_turns (event_id)`.execute(db);
  await sql`alter table event_deliveries add column waiting_for text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table event_deliveries drop column waiting_for`.execute(db);
  await sql`drop table delivery_turns`.execute(db);
  await sql`drop table webhook_rate_slots`.execute(db);
  await sql`alter table webhooks drop column ordering, drop column rate_limit`.execute(db);
}
