import type { Db } from '../db/database';
import { ApiError, type ErrorDetail } from '../errors/api-error';
import { newId } from '../ids';
import { OPERATOR_EVENT_SCOPE } from '../idempotency/scope';
import { canonicalJson, type KeyMaterial, keyMaterial } from '../idempotency/key-material';
import { claimAnswered } from '../idempotency/store';
import type { z } from '../schema';
import type { NewEventBatchBody } from './events.schema';
import { newEventOf, publishEvents } from './publish';

type BatchItem = z.output<typeof NewEventBatchBody>['events'][number];

/**
 * POST /admin/v1/events/batch: the events of a batch in one transaction, so all are
 * published or none; answers their ids in the order sent. An event with its own
 * `idempotency_key` that a batch of the last 24 hours already published (or that comes
 * twice in this one) is not published again: its id is the first one's. The same key
 * with another event refuses the whole batch, naming each such event by its index.
 */
export async function publishBatch(db: Db, items: readonly BatchItem[]): Promise<{ events: { id: string }[] }> {
  return db.transaction().execute(async (trx) => {
    const ids = items.map(() => newId('evt'));
    const refused: ErrorDetail[] = [];
    const reused = (index: number) => refused.push({ field: `events[${index}].idempotency_key`, message: 'already used for a different event in the last 24 hours' });
    // The first item of each key claims it; a later item with the same key and event is that event.
    const claims: { index: number; key: KeyMaterial; fingerprint: Buffer }[] = [];
    const sameAs = new Map<number, number>();
    const firstOf = new Map<string, (typeof claims)[number]>();
    items.forEach(({ idempotency_key, ...event }, index) => {
      if (idempotency_key === undefined) return;
      const key = keyMaterial(OPERATOR_EVENT_SCOPE, idempotency_key);
      const claim = { index, key, fingerprint: key.fingerprint(canonicalJson(event)) };
      const first = firstOf.get(key.digest.toString('hex'));
      if (!first) {
        firstOf.set(key.digest.toString('hex'), claim);
        claims.push(claim);
      } else if (first.fingerprint.equals(claim.fingerprint)) sameAs.set(index, first.index);
      else reused(index);
    });
    const held = await claimAnswered(trx, OPERATOR_EVENT_SCOPE, claims.map((c) => ({ ...c, answer: { status: 201, body: { id: ids[c.index]! } } })));
    const published = new Set<number>();
    claims.forEach((claim, n) => {
      const state = held[n]!;
      if (state.state === 'answered') {
        ids[claim.index] = (state.body as { id: string }).id;
        published.add(claim.index);
      } else if (state.state !== 'claimed') reused(claim.index);
    });
    for (const index of sameAs.keys()) published.add(index);
    if (refused.length) throw new ApiError('IDEMPOTENCY_KEY.REUSED', 'The batch was not published: an event\'s idempotency_key was used for a different event.', refused);

    const fresh = items.flatMap((item, index) => (published.has(index) ? [] : [{ index, input: { ...newEventOf(item), id: ids[index]! } }]));
    await publishEvents(trx, fresh.map((f) => f.input), { fieldOf: (n, field) => `events[${fresh[n]!.index}].${field}` });
    for (const [index, first] of sameAs) ids[index] = ids[first]!;
    return { events: ids.map((id) => ({ id })) };
  });
}
