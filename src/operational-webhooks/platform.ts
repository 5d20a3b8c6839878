import type { Executor } from '../db/database';
import type { Mode } from '../account/tables';
import type { Principal } from '../account/principal';
import { PLATFORM_USER_ID } from '../account/platform-user';

/*
 * The platform itself as an account (PLATFORM_USER_ID): operational endpoints are webhooks of
 * this reserved user, and operational events are its Events, so they are published, delivered,
 * signed, retried, recorded and replayed as every event is. It has no API key, no email, no
 * password and no parent (no customer sees it among their children, and the operator's user
 * update refuses it): nothing can authenticate as it, and only the operator API reaches its
 * webhooks and events. Created by the first operational endpoint (a migration would make it the
 * first user, which `shiphook dev` takes for "users exist"); never deleted.
 */

/** Operational events are live events, and their endpoints follow production's URL rules. */
export const PLATFORM_MODE: Mode = 'production';

const NAME = 'shiphook platform (operational webhooks)';

/**
 * The platform user as a caller of the webhooks' and events' rules (scoped by its id and
 * mode, as a key's user would be); undefined while it does not exist, unless `create`.
 */
export async function platformPrincipal(db: Executor, opts: { create?: boolean } = {}): Promise<Principal | undefined> {
  if (opts.create) {
    await db.insertInto('users').values({ id: PLATFORM_USER_ID, name: NAME }).onConflict((oc) => oc.column('id').doNothing()).execute();
  }
  const user = await db.selectFrom('users').selectAll().where('id', '=', PLATFORM_USER_ID).executeTakeFirst();
  return user && { user, mode: PLATFORM_MODE, keyId: 'operator' };
}
