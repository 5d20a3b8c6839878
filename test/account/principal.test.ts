import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ownedBy, ownerOf, type Principal } from '../../src/account/principal';
import type { Mode, UserRow } from '../../src/account/tables';
import { createDb, type Db } from '../../src/db/database';
import { newId } from '../../src/ids';

/**
 * The owner scope on its own, against PostgreSQL: the caller's rows are read,
 * updated and deleted; a row of another user, or of the caller in the other mode,
 * never is — each victim is read back unchanged.
 */
let db: Db;
let caller: Principal;
let other: Principal;

const principal = (user: UserRow, mode: Mode): Principal => ({ user, mode, keyId: 'ak_unused' });
const newUser = (name: string) => db.insertInto('users').values({ id: newId('user'), name }).returningAll().executeTakeFirstOrThrow();
const newWebhook = (who: Principal, url: string) =>
  db.insertInto('webhooks').values({ id: newId('hook'), ...ownerOf(who), url, custom_headers: '[]' }).returningAll().executeTakeFirstOrThrow();
const readBack = (id: string) => db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

beforeAll(async () => {
  db = createDb(inject('databaseUrl'), 2);
  caller = principal(await newUser('Caller'), 'test');
  other = principal(await newUser('Other'), 'test');
});
afterAll(() => db.destroy());

async function threeRows() {
  const own = await newWebhook(caller, 'https://own.example.com/h');
  const otherUser = await newWebhook(other, 'https://other-user.example.com/h');
  const otherMode = await newWebhook({ ...caller, mode: 'production' }, 'https://other-mode.example.com/h');
  return { own, victims: [otherUser, otherMode] };
}

describe('ownedBy', () => {
  it('stamps a new row with the caller and the mode', () => {
    expect(ownerOf(caller)).toEqual({ user_id: caller.user.id, mode: 'test' });
  });

  it('reads only the caller\'s rows of the key\'s mode', async () => {
    const { own, victims } = await threeRows();
    for (const victim of victims) {
      expect(await db.selectFrom('webhooks').selectAll().where('id', '=', victim.id).where(ownedBy(caller)).executeTakeFirst()).toBeUndefined();
    }
    const ids = (await db.selectFrom('webhooks').select('id').where(ownedBy(caller)).execute()).map((r) => r.id);
    expect(ids).toContain(own.id);
    expect(ids).not.toContain(victims[0]!.id);
    expect(ids).not.toContain(victims[1]!.id);
  });

  it('updates only the caller\'s rows of the key\'s mode', async () => {
    const { own, victims } = await threeRows();
    for (const target of [own, ...victims]) {
      await db.updateTable('webhooks').set({ url: 'https://changed.example.com/h' }).where('id', '=', target.id).where(ownedBy(caller)).execute();
    }
    expect((await readBack(own.id)).url).toBe('https://changed.example.com/h');
    for (const victim of victims) expect(await readBack(victim.id)).toEqual(victim);
  });

  it('deletes only the caller\'s rows of the key\'s mode', async () => {
    const { own, victims } = await threeRows();
    for (const target of [own, ...victims]) await db.deleteFrom('webhooks').where('id', '=', target.id).where(ownedBy(caller)).execute();
    expect(await db.selectFrom('webhooks').select('id').where('id', '=', own.id).executeTakeFirst()).toBeUndefined();
    for (const victim of victims) expect(await readBack(victim.id)).toEqual(victim);
  });

  it('qualifies the columns by table where a join would make them ambiguous', async () => {
    const { own, victims } = await threeRows();
    const rows = await db
      .selectFrom('webhooks as w')
      .innerJoin('users', 'users.id', 'w.user_id')
      .select(['w.id', 'users.name'])
      .where('w.id', 'in', [own.id, ...victims.map((v) => v.id)])
      .where(ownedBy(caller, { table: 'w' }))
      .execute();
    expect(rows).toEqual([{ id: own.id, name: 'Caller' }]);
  });

  it('with anyMode, scopes by the user alone (to tell "the other mode" from "not yours")', async () => {
    const { own, victims } = await threeRows();
    const ids = (await db.selectFrom('webhooks').select('id').where('id', 'in', [own.id, ...victims.map((v) => v.id)]).where(ownedBy(caller, { anyMode: true })).execute()).map((r) => r.id);
    expect(ids.sort()).toEqual([own.id, victims[1]!.id].sort());
  });
});
