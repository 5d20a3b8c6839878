import { type Expression, type ExpressionBuilder, type SqlBool, sql } from 'kysely';
import type { Mode, UserRow } from './tables';
import type { Db } from '../db/database';
import { notDeleted } from '../db/soft-delete';

/** Who is calling: the key's user (a parent or a child) and the key's mode. */
export interface Principal {
  user: UserRow;
  mode: Mode;
  keyId: string;
}

/** The columns every customer-owned row carries. */
export interface Owner {
  user_id: string;
  mode: Mode;
}

/** Of the tables in a query, those whose rows carry an owner. */
type OwnedTables<DB, TB extends keyof DB> = { [T in TB]: DB[T] extends Record<keyof Owner, unknown> ? T : never }[TB];

/**
 * The owner scope of every customer-owned row: the caller's user and the key's mode.
 * `.where(ownedBy(who))` on a select, update or delete of any table with `user_id`
 * and `mode` (the compiler refuses a table without them); `{ table }` qualifies the
 * columns where a join makes them ambiguous; `{ anyMode: true }` scopes by the user
 * alone, for a rule that must tell "yours, in the other mode" from "not yours".
 */
export function ownedBy(who: Principal, opts: { table?: string; anyMode?: boolean } = {}) {
  const column = (name: keyof Owner) => sql.ref(opts.table ? `${opts.table}.${name}` : name);
  return <DB, TB extends keyof DB>(eb: ExpressionBuilder<DB, TB & OwnedTables<DB, TB>>): Expression<SqlBool> => {
    const user = eb(column('user_id'), '=', who.user.id);
    return opts.anyMode ? user : eb.and([user, eb(column('mode'), '=', who.mode)]);
  };
}

/**
 * `ownedBy` of a table with soft deletes (webhooks): the caller's rows that were not
 * deleted. Where every query of such a table starts, so none forgets the deleted ones.
 */
export function ownedLive(who: Principal, opts: { table?: string } = {}) {
  return <DB, TB extends keyof DB>(eb: ExpressionBuilder<DB, TB & OwnedTables<DB, TB>>): Expression<SqlBool> =>
    eb.and([ownedBy(who, opts)<DB, TB>(eb), notDeleted(opts.table)]);
}

/** The owner a new row of the caller is stamped with: `.values({ id, ...ownerOf(who), … })`. */
export function ownerOf(who: Principal): Owner {
  return { user_id: who.user.id, mode: who.mode };
}

/** What every operation called with an API key is handed besides its input: the caller and the database. */
export interface Caller {
  who: Principal;
  db: Db;
}
