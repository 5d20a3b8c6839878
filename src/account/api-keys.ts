import { anyOf, type Db, type Executor } from '../db/database';
import type { ApiKeyRow, Mode, UserRow } from './tables';
import { ApiError, notFound } from '../errors/api-error';
import { isoSeconds } from '../format';
import { hasPrefix, newId } from '../ids';
import type { Principal } from './principal';
import { keyDigest, newApiKeyValue } from './secrets';
import { liveChildren } from './users';
import { notDeleted } from '../db/soft-delete';

/**
 * API keys (the API specification, 2.1, 2.2, 3.1 and 4.1). Who may manage which key:
 * - a ReferralCustomer (parent) manages its own keys and its children's;
 * - any parent manages its children's keys;
 * - a child manages its own keys;
 * - a plain parent's own keys are managed by sales, so it is refused with FORBIDDEN.
 */

export function apiKeyView(row: ApiKeyRow) {
  return {
    id: row.id,
    object: 'ApiKey' as const,
    mode: row.mode,
    key: row.key,
    created_at: isoSeconds(row.created_at),
    active: row.active,
  };
}

const SALES_ADVICE =
  'Managing the API keys of this account requires a ReferralCustomer account. Please contact sales to enable it.';

/** The keys that authenticate: active and undeleted, of an undeleted user. */
const activeKeys = (db: Executor) =>
  db.selectFrom('api_keys').innerJoin('users', 'users.id', 'api_keys.user_id').where('api_keys.active', '=', true).where(notDeleted('api_keys')).where(notDeleted('users'));

/** Authentication: the active, undeleted key with this digest (`keyDigest`), and its undeleted user. */
export async function findActiveKey(db: Db, digest: Buffer): Promise<Principal | undefined> {
  const row = await activeKeys(db)
    .selectAll('users')
    .select(['api_keys.id as key_id', 'api_keys.mode as key_mode'])
    .where('api_keys.key_digest', '=', digest)
    .executeTakeFirst();
  if (!row) return undefined;
  const { key_id, key_mode, ...user } = row;
  return { user: user as UserRow, mode: key_mode, keyId: key_id };
}

/** Whether the key a long request (a stream) was authenticated with still authenticates. */
export async function keyStillActive(db: Executor, keyId: string): Promise<boolean> {
  return (await activeKeys(db).select('api_keys.id').where('api_keys.id', '=', keyId).executeTakeFirst()) !== undefined;
}

/** Issues one key for a user (used at user creation too). */
export async function issueKey(db: Executor, userId: string, mode: Mode): Promise<ApiKeyRow> {
  const key = newApiKeyValue(mode);
  return db
    .insertInto('api_keys')
    .values({ id: newId('ak'), user_id: userId, mode, key, key_digest: keyDigest(key) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** POST /api_keys: a key for the user and each of its children; a child gets one for itself. */
export async function createKeys(db: Db, who: Principal, mode: Mode) {
  const user = who.user;
  if (!user.parent_id && !user.referral_customer) throw new ApiError('FORBIDDEN', SALES_ADVICE);
  return db.transaction().execute(async (trx) => {
    const own = await issueKey(trx, user.id, mode);
    if (!user.parent_id) {
      const children = await liveChildren(trx, user.id);
      for (const child of children) await issueKey(trx, child.id, mode);
    }
    return apiKeyView(own);
  });
}

/** POST /api_keys/:id/enable, /disable and DELETE /api_keys/:id. */
export async function setKeyActive(db: Db, who: Principal, keyId: string, active: boolean) {
  await managedKey(db, who, keyId);
  const row = await db
    .updateTable('api_keys')
    .set({ active })
    .where('id', '=', keyId)
    .where(notDeleted())
    .returningAll()
    .executeTakeFirst();
  if (!row) throw notFound('API key not found.');
  return apiKeyView(row);
}

export async function deleteKey(db: Db, who: Principal, keyId: string): Promise<void> {
  await managedKey(db, who, keyId);
  await db
    .updateTable('api_keys')
    .set({ deleted_at: new Date(), active: false })
    .where('id', '=', keyId)
    .where(notDeleted())
    .execute();
}

/** GET /api_keys: `{id, keys, children:[{id, keys, children: []}]}`, both modes. */
export async function listKeys(db: Db, who: Principal) {
  const user = who.user;
  const children = user.parent_id ? [] : await liveChildren(db, user.id);
  const ownerIds = [user.id, ...children.map((c) => c.id)];
  const keys = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('user_id', '=', anyOf(ownerIds))
    .where(notDeleted())
    .orderBy('id')
    .execute();
  const keysOf = (id: string) => keys.filter((k) => k.user_id === id).map(apiKeyView);
  return {
    id: user.id,
    keys: keysOf(user.id),
    children: children.map((c) => ({ id: c.id, keys: keysOf(c.id), children: [] })),
  };
}

/** The key, if the caller may manage it; 404 for keys of other accounts, 403 for a plain parent's own. */
async function managedKey(db: Db, who: Principal, keyId: string): Promise<ApiKeyRow> {
  if (!hasPrefix(keyId, 'ak')) throw notFound('API key not found.');
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .selectAll('api_keys')
    .select('users.parent_id as owner_parent_id')
    .where('api_keys.id', '=', keyId)
    .where(notDeleted('api_keys'))
    .where(notDeleted('users'))
    .executeTakeFirst();
  const user = who.user;
  if (!row) throw notFound('API key not found.');
  const { owner_parent_id, ...key } = row;
  if (owner_parent_id === user.id) return key; // a parent managing a child's key
  if (key.user_id !== user.id) throw notFound('API key not found.');
  if (user.parent_id || user.referral_customer) return key;
  throw new ApiError('FORBIDDEN', SALES_ADVICE);
}
