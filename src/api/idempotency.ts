import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../db/database';
import { ApiError } from '../errors/api-error';
import { canonicalRequest, KEY_FORMAT, KEY_FORMAT_RULE, keyMaterial } from '../idempotency/key-material';
import { type Claim, claimKey, keepAnswer, readKey, releaseKey } from '../idempotency/store';
import { log } from '../log';
import type { Answer, HeaderSink } from './answer';
import { errorText } from '../errors/error-text';

/**
 * The `Idempotency-Key` request header (Stripe's convention, the IETF draft "The
 * Idempotency-Key HTTP Header Field") on the operations declared `idempotent`: the first
 * request with a key does the work and its answer is kept for 24 hours; a retry with the
 * same key and the same request (method, path, body) gets that answer again, marked
 * `Idempotent-Replayed: true`, without the work being done again; the same key with
 * another request is refused. A retry that arrives while the first is still being
 * answered waits for its answer, for a bounded time. Answers of the operation, success
 * or 4XX, are kept; a 5XX is not (it says "retry", and the retry does the work).
 */

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** A retry waits this long for the first request's answer, then is told to come back. */
const WAIT_FOR_FIRST_MS = 10_000;
const FIRST_POLL_MS = 20;
const MAX_POLL_MS = 250;

/** One request of an idempotent operation with its key: whose keys (`scope`), and the request as "the same request" compares it. */
export interface KeyedRequest {
  scope: string;
  key: string;
  method: string;
  /** With the API's base: `/v2/webhooks/hook_…/recover`. */
  path: string;
  body: unknown;
}

/** Answers a keyed request of an idempotent operation once per key: `perform` runs for the first one only. */
export async function answerOnce(db: Db, request: KeyedRequest, setHeader: HeaderSink, perform: () => Promise<Answer>): Promise<Answer> {
  if (!KEY_FORMAT.test(request.key)) {
    throw new ApiError('IDEMPOTENCY_KEY.INVALID', 'The Idempotency-Key header is not a valid key.', [
      { field: IDEMPOTENCY_KEY_HEADER, message: KEY_FORMAT_RULE },
    ]);
  }
  const { scope } = request;
  const key = keyMaterial(scope, request.key);
  const fingerprint = key.fingerprint(canonicalRequest(request.method, request.path, request.body ?? {}));
  const deadline = Date.now() + WAIT_FOR_FIRST_MS;
  let held = await claimKey(db, scope, key, fingerprint);
  for (let pause = FIRST_POLL_MS; held.state === 'in flight'; pause = Math.min(pause * 2, MAX_POLL_MS)) {
    if (Date.now() >= deadline) {
      setHeader('Retry-After', '1');
      throw new ApiError('IDEMPOTENCY_KEY.IN_USE', 'A request with this Idempotency-Key is still being answered; retry shortly to get its answer.');
    }
    await sleep(pause);
    held = (await readKey(db, scope, key, fingerprint)) ?? (await claimKey(db, scope, key, fingerprint));
  }
  switch (held.state) {
    case 'other request':
      throw new ApiError('IDEMPOTENCY_KEY.REUSED', 'This Idempotency-Key was used for a different request (method, path or body) in the last 24 hours; use a new key for a new request.', [
        { field: IDEMPOTENCY_KEY_HEADER, message: 'already used for a different request' },
      ]);
    case 'answered':
      setHeader(REPLAYED_HEADER, 'true');
      return { status: held.status, body: held.body };
    case 'claimed':
      return answerFirst(db, held.claim, perform);
  }
}

async function answerFirst(db: Db, claim: Claim, perform: () => Promise<Answer>): Promise<Answer> {
  let answer: Answer;
  try {
    answer = await perform();
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) await keep(db, claim, { status: err.status, body: err.toBody() });
    else await releaseKey(db, claim).catch((e) => log.warn('idempotency key not released; it is taken over later', { error: errorText(e) }));
    throw err;
  }
  await keep(db, claim, answer);
  return answer;
}

/** The work is done: a failure to keep its answer must not turn it into an error the client would retry. */
async function keep(db: Db, claim: Claim, answer: Answer): Promise<void> {
  await keepAnswer(db, claim, answer).catch((e) => log.warn('idempotency answer not kept', { error: errorText(e) }));
}
