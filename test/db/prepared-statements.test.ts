import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/db/database';
import { testConfig } from '../support/system';

let db: Db;
const table = `prepared_test_${process.pid}_${Date.now()}`;

beforeAll(async () => {
  db = createDb(testConfig().databaseUrl!, 1); // one connection: every query reuses its prepared statements
  await sql`create table ${sql.table(table)} (a int)`.execute(db);
  await sql`insert into ${sql.table(table)} values (1)`.execute(db);
});
afterAll(async () => {
  await sql`drop table if exists ${sql.table(table)}`.execute(db);
  await db.destroy();
});

describe('prepared statements', () => {
  it('are prepared once per connection and reused', async () => {
    const select = () => sql<{ a: number }>`select * from ${sql.table(table)} where a = ${1}`.execute(db);
    await select();
    await select();
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements where statement like ${`%from "${table}"%`}`.execute(db);
    expect(rows[0]!.n).toBe(1);
  });

  it('survive a migration that changes the table under them', async () => {
    const select = () => sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db);
    expect((await select()).rows).toEqual([{ a: 1 }]);
    await sql`alter table ${sql.table(table)} add column b text default 'x'`.execute(db);
    expect((await select()).rows).toEqual([{ a: 1, b: 'x' }]); // re-run unprepared, not an error
    expect((await select()).rows).toEqual([{ a: 1, b: 'x' }]); // and on a fresh connection after that
  });

  it('inside a transaction the error surfaces, and the next transaction works', async () => {
    const inTx = () => db.transaction().execute((trx) => sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(trx));
    await inTx();
    await sql`alter table ${sql.table(table)} add column c int default 7`.execute(db);
    await expect(inTx()).rejects.toMatchObject({ code: '0A000' });
    expect((await inTx()).rows).toEqual([{ a: 1, b: 'x', c: 7 }]);
  });
});
