import { promises as fs } from 'node:fs';
import path from 'node:path';
import { type Migration, Migrator, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../../src/db/database';
import { keepPayloadPartitionsAhead, partitionName } from '../../src/events/payload-partitions';

// The migration that partitions Payloads, on a database of the test's own: rows written
// before it land in their day's partition, inserts find one for days ahead, and down
// gives the plain table back with its rows.
const MIGRATION = '2026_11_26_0203_payloads_partitioned';
const DAY = 86_400_000;
const shared = new URL(inject('databaseUrl'));
const name = `shiphook_partitions_${process.pid}_${Date.now()}`;
let db: Db;
let migrator: Migrator;

const admin = async (statement: string) => {
  const c = new pg.Client({ connectionString: shared.toString() });
  await c.connect();
  try {
    await c.query(statement);
  } finally {
    await c.end();
  }
};

beforeAll(async () => {
  await admin(`create database ${name}`);
  const url = new URL(shared);
  url.pathname = `/${name}`;
  db = createDb(url.toString(), 2);
  // Imported through vitest (Kysely's file provider imports natively, which reads no TypeScript).
  const files = (await fs.readdir('migrations')).filter((f) => f.endsWith('.ts'));
  const migrations: Record<string, Migration> = {};
  for (const f of files) migrations[f.replace(/\.ts$/, '')] = await import(path.resolve('migrations', f));
  migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
});
afterAll(async () => {
  await db?.destroy();
  await admin(`drop database if exists ${name} with (force)`);
});

const check = ({ error }: { error?: unknown }) => {
  if (error) throw error;
};
const rows = async () => (await sql<{ part: string; id: string }>`select tableoid::regclass::text as part, id from payloads order by id`.execute(db)).rows;

it('moves existing Payloads into day partitions, leaves the days ahead to the configured width, and down gives the plain table back', async () => {
  const migrations = (await migrator.getMigrations()).map((m) => m.name);
  check(await migrator.migrateTo(migrations[migrations.indexOf(MIGRATION) - 1]!));
  const old = new Date(Math.floor(Date.now() / DAY) * DAY - 400 * DAY + 3_600_000);
  await sql`insert into users (id, name, email) values ('user_p', 'p', 'p@example.com')`.execute(db);
  await sql`insert into webhooks (id, user_id, mode, url) values ('hook_p', 'user_p', 'test', 'https://example.com')`.execute(db);
  await sql`insert into events (id, user_id, mode, description, result) values ('evt_p', 'user_p', 'test', 'tracker.updated', '{}')`.execute(db);
  const payload = (id: string, at: Date) =>
    sql`insert into payloads (id, event_id, webhook_id, request_url, request_headers, request_body, response_code, response_headers, response_body, total_time, created_at)
      values (${id}, 'evt_p', 'hook_p', 'https://example.com', '{}', '{}', 200, '{}', 'ok', 1, ${at})`.execute(db);
  await payload('payload_a', old);
  await payload('payload_b', new Date());

  check(await migrator.migrateTo(MIGRATION));
  expect(await rows()).toEqual([
    { part: partitionName(new Date(Math.floor(old.getTime() / DAY) * DAY)), id: 'payload_a' },
    { part: partitionName(new Date(Math.floor(Date.now() / DAY) * DAY)), id: 'payload_b' },
  ]);
  const key = await sql<{ def: string }>`select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'payloads_pkey'`.execute(db);
  expect(key.rows.map((r) => r.def)).toEqual(['PRIMARY KEY (id, created_at)']);
  // Only the days that held rows: a day without one goes to DEFAULT, the safety net, until the
  // partitions ahead are made with the width the configured retention asks for.
  await payload('payload_c', new Date(Date.now() + 7 * DAY));
  expect((await rows()).find((r) => r.id === 'payload_c')!.part).toBe('payloads_default');
  await keepPayloadPartitionsAhead(db, { eventRetentionMs: 30 * DAY, retentionEveryMs: 3_600_000 });
  expect((await rows()).find((r) => r.id === 'payload_c')!.part).toBe(partitionName(new Date(Math.floor(Date.now() / DAY) * DAY + 7 * DAY)));
  expect((await sql`select 1 from payloads_default`.execute(db)).rows).toEqual([]);

  check(await migrator.migrateDown());
  expect(await rows()).toEqual(['payload_a', 'payload_b', 'payload_c'].map((id) => ({ part: 'payloads', id })));
}, 60_000);
