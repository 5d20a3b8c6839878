import type { Db, Executor } from '../db/database';
import type { UserRow, UserUpdate } from './tables';
import { ApiError, notFound } from '../errors/api-error';
import { dollars, isoSeconds, rate } from '../format';
import { hasPrefix } from '../ids';
import type { Principal } from './principal';
import type { z } from '../schema';
import { hashPassword, passwordNeedsRehash, verifyPassword } from './secrets';
import type { OperatorUserUpdate, UserUpdate as UserUpdateSchema } from './users.schema';
import { type PageParams, paginate } from '../db/paginate';
import { notDeleted } from '../db/soft-delete';
import { PLATFORM_USER_ID } from './platform-user';

/**
 * Users (the API specification, 2.6 and 4.5): their views, who sees whom, updates and
 * the deletion of children (creation, with the first keys: user-creation.ts). A
 * child's view carries no billing fields and no email.
 */

function childView(row: UserRow) {
  return {
    id: row.id,
    object: 'User' as const,
    parent_id: row.parent_id,
    name: row.name,
    phone_number: row.phone_number,
    verified: row.verified,
    created_at: isoSeconds(row.created_at),
    default_carbon_offset: row.default_carbon_offset,
    has_elevate_access: row.has_elevate_access,
    children: [] as unknown[],
  };
}

function parentView(row: UserRow, children: UserRow[]) {
  return {
    ...childView(row),
    balance: dollars(row.balance),
    price_per_shipment: dollars(row.price_per_shipment),
    recharge_amount: dollars(row.recharge_amount),
    secondary_recharge_amount: dollars(row.secondary_recharge_amount),
    recharge_threshold: dollars(row.recharge_threshold),
    has_billing_method: row.has_billing_method,
    cc_fee_rate: rate(row.cc_fee_rate),
    default_insurance_amount: dollars(row.default_insurance_amount),
    insurance_fee_rate: rate(row.insurance_fee_rate),
    insurance_fee_minimum: dollars(row.insurance_fee_minimum),
    email: row.email,
    children: children.map(childView),
  };
}

export type UserView = ReturnType<typeof childView> | ReturnType<typeof parentView>;
export type UserChanges = z.output<typeof UserUpdateSchema>;

export async function userView(db: Executor, row: UserRow): Promise<UserView> {
  return row.parent_id ? childView(row) : parentView(row, await liveChildren(db, row.id));
}

export async function liveChildren(db: Executor, parentId: string): Promise<UserRow[]> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('parent_id', '=', parentId)
    .where(notDeleted())
    .orderBy('id')
    .execute();
}

/** The caller itself or one of its live children; anything else is 404. */
export async function visibleUser(db: Db, who: Principal, id: string): Promise<UserRow> {
  if (id === who.user.id) return who.user;
  const row = hasPrefix(id, 'user')
    ? await db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', id)
        .where('parent_id', '=', who.user.id)
        .where(notDeleted())
        .executeTakeFirst()
    : undefined;
  if (!row) throw notFound('User not found.');
  return row;
}

// ---- updates --------------------------------------------------------------------

/**
 * PATCH /users and PATCH /users/:id, of the caller or a child `visibleUser` found.
 * Partial: only passed attributes change. A child (or a parent editing a child) may
 * change only `name`; other fields are ignored (and not even read: ChildUpdate).
 * `current_password` is required to change `email` or `password`; an account without
 * a password cannot change them here (an operator can).
 */
export async function updateUser(db: Db, target: UserRow, input: UserChanges) {
  const changes: UserUpdate = {};
  if (target.parent_id) {
    if (input.name !== undefined) changes.name = input.name;
  } else {
    const { email, password, current_password, ...fields } = input;
    for (const [field, value] of Object.entries(fields)) {
      if (value !== undefined) (changes as Record<string, unknown>)[field] = value === '' ? null : typeof value === 'number' ? String(value) : value;
    }
    if (email !== undefined || password !== undefined) {
      const refuse = (message: string) => new ApiError('USER.INVALID', 'The user could not be updated.', [{ field: 'current_password', message }]);
      if (!target.password_hash) throw refuse('this account has no password, so its email and password cannot be changed through the API; an operator can change them');
      if (!current_password) throw refuse('is required to change email or password');
      if (!(await verifyPassword(current_password, target.password_hash))) throw refuse('is incorrect');
      // A hash made with weaker parameters is upgraded on a successful check.
      if (password === undefined && passwordNeedsRehash(target.password_hash)) changes.password_hash = await hashPassword(current_password);
    }
    if (email !== undefined) changes.email = email;
    if (password !== undefined) changes.password_hash = await hashPassword(password);
  }

  return saveUser(db, target, changes);
}

/** PATCH /admin/v1/users/:id: an operator sets a parent's email or password, no current password needed. */
export async function operatorUpdateUser(db: Db, id: string, input: z.output<typeof OperatorUserUpdate>) {
  if (id === PLATFORM_USER_ID) {
    throw notFound(`User not found: ${id} is the platform's own user, which owns the operational webhooks (/admin/v1/operational_webhooks); it takes no email or password.`);
  }
  const target = hasPrefix(id, 'user')
    ? await db.selectFrom('users').selectAll().where('id', '=', id).where('parent_id', 'is', null).where(notDeleted()).executeTakeFirst()
    : undefined;
  if (!target) throw notFound('User not found.');
  const changes: UserUpdate = {};
  if (input.email !== undefined) changes.email = input.email;
  if (input.password !== undefined) changes.password_hash = await hashPassword(input.password);
  return saveUser(db, target, changes);
}

async function saveUser(db: Db, target: UserRow, changes: UserUpdate) {
  if (Object.keys(changes).length === 0) return userView(db, target);
  try {
    const row = await db
      .updateTable('users')
      .set({ ...changes, updated_at: new Date() })
      .where('id', '=', target.id)
      .where(notDeleted())
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound('User not found.');
    return userView(db, row);
  } catch (err) {
    if ((err as { code?: string }).code === '23505') {
      throw new ApiError('USER.INVALID', 'The user could not be updated.', [{ field: 'email', message: 'is already taken' }]);
    }
    throw err;
  }
}

/** DELETE /users/:id: removes a child; its keys stop working at once. */
export async function deleteChildUser(db: Db, who: Principal, id: string): Promise<void> {
  const target = await visibleUser(db, who, id);
  if (target.id === who.user.id) {
    throw new ApiError('USER.UNAUTHORIZED', 'Only child accounts can be deleted through this interface.');
  }
  await db.transaction().execute(async (trx) => {
    const now = new Date();
    await trx.updateTable('users').set({ deleted_at: now }).where('id', '=', target.id).execute();
    await trx.updateTable('api_keys').set({ deleted_at: now, active: false }).where('user_id', '=', target.id).where(notDeleted()).execute();
  });
}

/** GET /users/children: the caller's live children, oldest first. */
export async function listChildren(db: Db, who: Principal, page: PageParams) {
  const query = db.selectFrom('users').selectAll().where('parent_id', '=', who.user.id).where(notDeleted());
  const { items, has_more } = await paginate(query, 'users', page, 'oldest');
  return { children: items.map(childView), has_more };
}
