import type { Db, Executor } from '../db/database';
import { ApiError } from '../errors/api-error';
import { newId } from '../ids';
import type { z } from '../schema';
import { apiKeyView, issueKey } from './api-keys';
import type { Principal } from './principal';
import { hashPassword } from './secrets';
import { MODES } from './tables';
import type { NewChild, NewParentUser } from './users.schema';
import { userView } from './users';
import { notDeleted } from '../db/soft-delete';

/**
 * Opening accounts: a parent (by an operator; the real service's web interface) or a
 * child of the caller (POST /users), each with one key of each mode.
 */

/** A new user's keys, one per mode, in MODES order. */
async function firstKeys(trx: Executor, userId: string) {
  const keys = [];
  for (const mode of MODES) keys.push(apiKeyView(await issueKey(trx, userId, mode)));
  return keys;
}

/** Operator-side creation of a parent account. */
export async function createParentUser(db: Db, input: z.output<typeof NewParentUser>) {
  const { name, email, password } = input;
  const balance = input.balance === undefined ? undefined : String(input.balance);
  const password_hash = password ? await hashPassword(password) : null;
  return db.transaction().execute(async (trx) => {
    // Both sides lowered by PostgreSQL, as the unique index does: JavaScript's toLowerCase differs beyond ASCII (a 500 the fuzzer found).
    const taken = await trx.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['email']), '=', eb.fn('lower', [eb.val(email)]))).where(notDeleted()).executeTakeFirst();
    if (taken) throw new ApiError('USER.INVALID', 'The user could not be created.', [{ field: 'email', message: 'is already taken' }]);
    const row = await trx
      .insertInto('users')
      .values({
        id: newId('user'),
        name,
        email,
        phone_number: input.phone_number ?? null,
        password_hash,
        referral_customer: input.referral_customer ?? false,
        end_shipper_enabled: input.end_shipper_enabled ?? false,
        ...(balance !== undefined ? { balance } : {}),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { user: await userView(trx, row), api_keys: await firstKeys(trx, row.id) };
  });
}

/** Children have no children of their own. */
export function requireParent(who: Principal): void {
  if (who.user.parent_id) throw new ApiError('USER.PARENT.INVALID', 'A child account cannot be created beneath another child.');
}

/** POST /users: a child of the caller. */
export async function createChildUser(db: Db, who: Principal, input: z.output<typeof NewChild>) {
  requireParent(who);
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('users')
      .values({ id: newId('user'), parent_id: who.user.id, name: input.name, phone_number: input.phone_number ?? null })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ...(await userView(trx, row)), api_keys: await firstKeys(trx, row.id) };
  });
}
