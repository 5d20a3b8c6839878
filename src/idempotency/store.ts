import { sql } from 'kysely';
import type { Db, Executor } from '../db/database';
import type { KeyMaterial } from './key-material';

/**
 * The Idempotency-Key store (table idempotency_keys): per caller and key, the first
 * request's fingerprint and, once answered, its answer, for 24 hours. A key is claimed
 * by inserting its row (the primary key makes one claim win); the claimant answers it;
 * everyone else reads the row.
 */

/** How long a key answers with its first answer (Stripe keeps keys 24 hours). */
export const IDEMPOTENCY_WINDOW = '24 hours';
/**
 * An answer still missing after this long belongs to a request that died with its
 * process (no operation runs for minutes: statements are cut at 15 s): the next request
 * with the same key and body takes the key over and does the work.
 */
const TAKEOVER_AFTER = '5 minutes';

export type KeyState =
  | { state: 'claimed' }
  | { state: 'answered'; status: number; body: unknown }
  | { state: 'in flight' }
  | { state: 'other request' };
type Held = Exclude<KeyState, { state: 'claimed' }>;

/**
 * A request's hold on a key: when it was claimed (the row's `locked_at`, exact), so a
 * request whose key was taken over neither overwrites nor lets go of its successor's claim.
 */
export interface Claim {
  scope: string;
  key: KeyMaterial;
  since: string;
}

/** Claims the key for a request with this fingerprint, or says what the key already holds. */
export async function claimKey(db: Db, scope: string, key: KeyMaterial, fingerprint: Buffer): Promise<Held | { state: 'claimed'; claim: Claim }> {
  for (;;) {
    const claimed = await db
      .insertInto('idempotency_keys')
      .values({ scope, key_digest: key.digest, fingerprint, status: null, answer: null, expires_at: sql<Date>`now() + ${IDEMPOTENCY_WINDOW}::interval` })
      .onConflict((oc) =>
        oc
          .columns(['scope', 'key_digest'])
          .doUpdateSet({ fingerprint, status: null, answer: null, locked_at: sql<Date>`now()`, expires_at: sql<Date>`now() + ${IDEMPOTENCY_WINDOW}::interval` })
          .where((eb) =>
            eb.or([
              eb('idempotency_keys.expires_at', '<=', sql<Date>`now()`),
              eb.and([eb('idempotency_keys.status', 'is', null), eb('idempotency_keys.fingerprint', '=', fingerprint), eb('idempotency_keys.locked_at', '<', sql<Date>`now() - ${TAKEOVER_AFTER}::interval`)]),
            ]),
          ),
      )
      .returning(sql<string>`locked_at::text`.as('since'))
      .executeTakeFirst();
    if (claimed) return { state: 'claimed', claim: { scope, key, since: claimed.since } };
    const held = await readKey(db, scope, key, fingerprint);
    // Gone between the two statements (its request failed and let it go): claim again.
    if (held) return held;
  }
}

/** What the key holds now for a request with this fingerprint; undefined when nothing holds it. */
export async function readKey(db: Executor, scope: string, key: KeyMaterial, fingerprint: Buffer): Promise<Held | undefined> {
  const row = await db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'status', 'answer'])
    .where('scope', '=', scope)
    .where('key_digest', '=', key.digest)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  if (!row) return undefined;
  if (!row.fingerprint.equals(fingerprint)) return { state: 'other request' };
  if (row.status === null || row.answer === null) return { state: 'in flight' };
  return { state: 'answered', status: row.status, body: key.open(row.answer) };
}

/** Keeps the claimant's answer, if it still holds the key. */
export async function keepAnswer(db: Db, { scope, key, since }: Claim, answer: { status: number; body: unknown }): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ status: answer.status, answer: key.seal(answer.body) })
    .where('scope', '=', scope)
    .where('key_digest', '=', key.digest)
    .where('status', 'is', null)
    .where('locked_at', '=', sql<Date>`${since}::timestamptz`)
    .execute();
}

/** Lets the key go without an answer (the request failed in a way worth retrying): the next request does the work. */
export async function releaseKey(db: Db, { scope, key, since }: Claim): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('scope', '=', scope)
    .where('key_digest', '=', key.digest)
    .where('status', 'is', null)
    .where('locked_at', '=', sql<Date>`${since}::timestamptz`)
    .execute();
}

/**
 * Removes up to `limit` keys that expired before `before` (the retention schedule calls
 * it until it returns less than `limit`); returns how many it removed. Bounded, so no
 * statement holds many row locks or runs long.
 */
export async function deleteExpiredIdempotencyKeys(db: Executor, opts: { before: Date; limit: number }): Promise<number> {
  const result = await sql`
    delete from idempotency_keys
    where ctid = any(array(select ctid from idempotency_keys where expires_at < ${opts.before} limit ${opts.limit}))`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Inside the caller's transaction, claims keys whose answers are already known (a batch
 * publish's per-event keys: the answer is the event's id, chosen before it is written):
 * one statement for all, so a concurrent batch with one of the keys waits on the
 * primary key until this transaction ends and then reads what it committed. The keys
 * must be distinct. Returns, in order, `claimed` or what each key already held.
 */
export async function claimAnswered(
  trx: Executor,
  scope: string,
  entries: readonly { key: KeyMaterial; fingerprint: Buffer; answer: { status: number; body: unknown } }[],
): Promise<KeyState[]> {
  if (entries.length === 0) return [];
  const claimed = await trx
    .insertInto('idempotency_keys')
    .values(entries.map((e) => ({ scope, key_digest: e.key.digest, fingerprint: e.fingerprint, status: e.answer.status, answer: e.key.seal(e.answer.body), expires_at: sql<Date>`now() + ${IDEMPOTENCY_WINDOW}::interval` })))
    .onConflict((oc) =>
      oc
        .columns(['scope', 'key_digest'])
        .doUpdateSet((eb) => ({ fingerprint: eb.ref('excluded.fingerprint'), status: eb.ref('excluded.status'), answer: eb.ref('excluded.answer'), locked_at: sql<Date>`now()`, expires_at: eb.ref('excluded.expires_at') }))
        .where('idempotency_keys.expires_at', '<=', sql<Date>`now()`),
    )
    .returning('key_digest')
    .execute();
  const won = new Set(claimed.map((r) => r.key_digest.toString('hex')));
  const rest = entries.filter((e) => !won.has(e.key.digest.toString('hex')));
  const held = rest.length
    ? await trx.selectFrom('idempotency_keys').select(['key_digest', 'fingerprint', 'status', 'answer']).where('scope', '=', scope).where('key_digest', '=', sql<Buffer>`any(${rest.map((e) => e.key.digest)}::bytea[])`).execute()
    : [];
  const byDigest = new Map(held.map((r) => [r.key_digest.toString('hex'), r]));
  return entries.map((e): KeyState => {
    const hex = e.key.digest.toString('hex');
    if (won.has(hex)) return { state: 'claimed' };
    const row = byDigest.get(hex);
    if (!row || !row.fingerprint.equals(e.fingerprint)) return { state: 'other request' };
    if (row.status === null || row.answer === null) return { state: 'in flight' };
    return { state: 'answered', status: row.status, body: e.key.open(row.answer) };
  });
}
