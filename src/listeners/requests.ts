import { sql } from 'kysely';
import type { Db, Executor } from '../db/database';
import { isoMillis } from '../format';
import { hasPrefix } from '../ids';
import { notFound } from '../errors/api-error';
import { LISTENER_ANSWERS_CHANNEL } from '../outbound/listener-transport';
import type { z } from '../schema';
import type { ListenerAnswerBody } from './listeners.schema';

/**
 * A listener's side of its queue (src/outbound/listener-transport.ts queues and waits):
 * what its stream sends, and the answers its CLI posts back.
 */

/** Requests one read of the queue sends at most; the next read sends the rest. */
const PER_READ = 100;

/**
 * The listener's requests still waiting for an answer, oldest first, or undefined when the
 * listener is gone (one statement: its stream reads this at every wake).
 */
export async function waitingRequests(db: Executor, listenerId: string) {
  const rows = await db
    .selectFrom('listeners as l')
    .leftJoin('listener_requests as r', (join) =>
      join.onRef('r.listener_id', '=', 'l.id').on('r.answered_at', 'is', null).on('r.expires_at', '>', sql<Date>`now()`),
    )
    .select(['l.id as listener_id', 'r.id', 'r.request_headers', 'r.request_body', 'r.expires_at'])
    .where('l.id', '=', listenerId)
    .orderBy('r.id')
    .limit(PER_READ)
    .execute();
  if (rows.length === 0) return undefined;
  return rows.flatMap((r) =>
    r.id && r.request_headers && r.request_body !== null && r.expires_at
      ? [{ object: 'ListenerRequest' as const, id: r.id, headers: r.request_headers, body: r.request_body, expires_at: isoMillis(r.expires_at) }]
      : [],
  );
}

/**
 * POST /listeners/:id/requests/:request_id/answer: records the local endpoint's answer
 * and wakes the attempt waiting for it. 404 when nothing waits for one (answered
 * already, or withdrawn at the attempt's timeout: the retry schedule brings it again).
 */
export async function answerRequest(db: Db, listenerId: string, requestId: string, answer: z.output<typeof ListenerAnswerBody>): Promise<void> {
  const { rows } = hasPrefix(requestId, 'payload')
    ? await sql`
        with answered as (
          update listener_requests set answered_at = now(), response_code = ${answer.status}, response_headers = ${JSON.stringify(answer.headers ?? {})}::jsonb,
            response_body = ${answer.body ?? ''}, total_time = ${answer.total_time}, error = ${answer.error ?? null}
          where id = ${requestId} and listener_id = ${listenerId} and answered_at is null
          returning id)
        select pg_notify(${LISTENER_ANSWERS_CHANNEL}, id) from answered`.execute(db)
    : { rows: [] };
  if (rows.length === 0) throw notFound('No request of this listener waits for that answer: its attempt timed out (the retry schedule sends the event again) or it was answered already.');
}
