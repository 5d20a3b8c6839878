import type { Db, Executor } from '../db/database';
import type { UserRow, UserUpdate } from '../db/tables/users';
import { ApiError, FieldErrors, notFound } from '../errors/api-error';
import { dollars, isoSeconds, rate } from '../format';
import { hasPrefix, newId } from '../ids';
import { apiKeyView, issueKey } from './api-keys';
import type { Principal } from './principal';
import { hashPassword, passwordNeedsRehash, verifyPassword } from './secrets';
import { type PageParams, paginate } from '../db/paginate';

/**
 * Users (seed 2.6, 4.5). Parents are created by operators (the web interface of
 * the real service); children by their parent through POST /users. A child's
 * view carries no billing fields and no email.
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

export async function userView(db: Executor, row: UserRow): Promise<UserView> {
  return row.parent_id ? childView(row) : parentView(row, await liveChildren(db, row.id));
}

export async function liveChildren(db: Executor, parentId: string): Promise<UserRow[]> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('parent_id', '=', parentId)
    .where('deleted_at', 'is', null)
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
        .where('deleted_at', 'is', null)
        .executeTakeFirst()
    : undefined;
  if (!row) throw notFound('User not found.');
  return row;
}

// ---- creation -------------------------------------------------------------------

export interface NewParentUser {
  name: string;
  email: string;
  phone_number?: string | null;
  password?: string | null;
  referral_customer?: boolean;
  end_shipper_enabled?: boolean;
  balance?: string;
}

/** Operator-side creation of a parent account with one test and one production key. */
export async function createParentUser(db: Db, input: Record<string, unknown>) {
  const errors = new FieldErrors();
  const name = requiredString(input.name, 'name', errors);
  const email = requiredString(input.email, 'email', errors);
  if (email && !EMAIL.test(email)) errors.add('email', 'must be an email address');
  const phone = optionalString(input.phone_number, 'phone_number', errors);
  const password = optionalString(input.password, 'password', errors);
  if (password !== undefined && password !== null) checkPassword(password, errors);
  const referral = optionalBoolean(input.referral_customer, 'referral_customer', errors);
  const endShipper = optionalBoolean(input.end_shipper_enabled, 'end_shipper_enabled', errors);
  const balance = input.balance === undefined ? undefined : String(input.balance);
  if (balance !== undefined && !/^\d+(\.\d+)?$/.test(balance)) errors.add('balance', 'must be a non-negative dollar amount');
  errors.throwIfAny('USER.INVALID', 'The user could not be created.');

  const password_hash = password ? await hashPassword(password) : null;
  return db.transaction().execute(async (trx) => {
    const taken = await trx.selectFrom('users').select('id').where(({ fn }) => fn('lower', ['email']), '=', email!.toLowerCase()).where('deleted_at', 'is', null).executeTakeFirst();
    if (taken) throw new ApiError('USER.INVALID', 'The user could not be created.', [{ field: 'email', message: 'is already taken' }]);
    const row = await trx
      .insertInto('users')
      .values({
        id: newId('user'),
        name: name!,
        email: email!,
        phone_number: phone ?? null,
        password_hash,
        referral_customer: referral ?? false,
        end_shipper_enabled: endShipper ?? false,
        ...(balance !== undefined ? { balance } : {}),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const keys = [await issueKey(trx, row.id, 'test'), await issueKey(trx, row.id, 'production')];
    return { user: await userView(trx, row), api_keys: keys.map(apiKeyView) };
  });
}

/** POST /users: a child of the caller, with its own test and production keys. */
export async function createChildUser(db: Db, who: Principal, input: Record<string, unknown>) {
  if (who.user.parent_id) {
    throw new ApiError('USER.PARENT.INVALID', 'A child account cannot be created beneath another child.');
  }
  const errors = new FieldErrors();
  const name = requiredString(input.name, 'name', errors);
  const phone = optionalString(input.phone_number, 'phone_number', errors);
  errors.throwIfAny('USER.INVALID', 'The user could not be created.');
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('users')
      .values({ id: newId('user'), parent_id: who.user.id, name: name!, phone_number: phone ?? null })
      .returningAll()
      .executeTakeFirstOrThrow();
    const keys = [await issueKey(trx, row.id, 'test'), await issueKey(trx, row.id, 'production')];
    return { ...(await userView(trx, row)), api_keys: keys.map(apiKeyView) };
  });
}

// ---- updates --------------------------------------------------------------------

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DOLLAR_FIELDS = ['recharge_amount', 'secondary_recharge_amount', 'recharge_threshold', 'default_insurance_amount'] as const;

/**
 * PATCH /users and PATCH /users/:id. Partial: only passed attributes change.
 * A child (or a parent editing a child) may change only `name`; other fields are
 * ignored. `current_password` is required to change `email` or `password` of an
 * account that has a password.
 */
export async function updateUser(db: Db, who: Principal, id: string | undefined, input: Record<string, unknown>) {
  const target = id === undefined ? who.user : await visibleUser(db, who, id);
  const errors = new FieldErrors();
  const changes: UserUpdate = {};

  if ('name' in input) changes.name = requiredString(input.name, 'name', errors);
  if (!target.parent_id) {
    if ('phone_number' in input) changes.phone_number = optionalString(input.phone_number, 'phone_number', errors) ?? null;
    if ('default_carbon_offset' in input) changes.default_carbon_offset = optionalBoolean(input.default_carbon_offset, 'default_carbon_offset', errors);
    for (const field of DOLLAR_FIELDS) {
      if (!(field in input)) continue;
      const value = input[field];
      if (value === null || value === '') changes[field] = null;
      else if (/^\d+(\.\d+)?$/.test(String(value))) changes[field] = String(value);
      else errors.add(field, 'must be a non-negative dollar amount');
    }
    const email = 'email' in input ? requiredString(input.email, 'email', errors) : undefined;
    if (email !== undefined && !EMAIL.test(email)) errors.add('email', 'must be an email address');
    const password = 'password' in input ? requiredString(input.password, 'password', errors) : undefined;
    if (password !== undefined) checkPassword(password, errors);
    if ((email !== undefined || password !== undefined) && target.password_hash) {
      const current = input.current_password;
      if (typeof current !== 'string' || current === '') errors.add('current_password', 'is required to change email or password');
      else if (!(await verifyPassword(current, target.password_hash))) errors.add('current_password', 'is incorrect');
      else if (password === undefined && passwordNeedsRehash(target.password_hash)) changes.password_hash = await hashPassword(current);
    }
    if (email !== undefined) changes.email = email;
    if (password !== undefined && errors.empty) changes.password_hash = await hashPassword(password);
  }
  errors.throwIfAny('USER.INVALID', 'The user could not be updated.');

  if (Object.keys(changes).length === 0) return userView(db, target);
  try {
    const row = await db
      .updateTable('users')
      .set({ ...changes, updated_at: new Date() })
      .where('id', '=', target.id)
      .where('deleted_at', 'is', null)
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
    await trx.updateTable('api_keys').set({ deleted_at: now, active: false }).where('user_id', '=', target.id).where('deleted_at', 'is', null).execute();
  });
}

// ---- field readers ---------------------------------------------------------------

function requiredString(value: unknown, field: string, errors: FieldErrors): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') {
    errors.add(field, 'cannot be blank');
    return undefined;
  }
  if (value.length > 255) errors.add(field, 'must be at most 255 characters');
  return value.trim();
}

function optionalString(value: unknown, field: string, errors: FieldErrors): string | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value !== 'string') {
    errors.add(field, 'must be a string');
    return undefined;
  }
  return value.trim();
}

function optionalBoolean(value: unknown, field: string, errors: FieldErrors): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') {
    errors.add(field, 'must be true or false');
    return undefined;
  }
  return value;
}

function checkPassword(password: string, errors: FieldErrors): void {
  if (password.length < 8) errors.add('password', 'must be at least 8 characters');
  if (password.length > 256) errors.add('password', 'must be at most 256 characters');
}

/** GET /users/children: the caller's live children, oldest first. */
export async function listChildren(db: Db, who: Principal, page: PageParams) {
  const query = db.selectFrom('users').selectAll().where('parent_id', '=', who.user.id).where('deleted_at', 'is', null);
  const { items, has_more } = await paginate(query, 'users', page, 'oldest');
  return { children: items.map(childView), has_more };
}
