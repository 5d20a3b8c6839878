import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { ListenerRequestRow } from '../listeners/tables';
import { watchChannel } from '../db/notifications';
import type { SendResult } from './send-result';
import { reasonText } from './outbound-error';

/**
 * The transport of `listen://lst_…` URLs: a listener's deliveries (`shiphook listen`).
 * Nothing connects anywhere: the signed request is queued in `listener_requests`
 * (NOTIFY on LISTENER_REQUESTS_CHANNEL wakes the listener's stream, src/listeners/), and
 * the attempt waits, bounded by its timeout, for the CLI to forward it to the developer's
 * machine and post the answer back through the API (NOTIFY on LISTENER_ANSWERS_CHANNEL).
 * A request not answered in time is withdrawn, and the retry schedule takes over as for
 * any endpoint that did not answer. The server never learns where the CLI forwards.
 */
export const LISTENER_SCHEME = 'listen:';
/** Payload: the listener's id (a request was queued, or the listener was removed). */
export const LISTENER_REQUESTS_CHANNEL = 'shiphook_listener_requests';
/** Payload: the request's id (answered, or removed with its listener). */
export const LISTENER_ANSWERS_CHANNEL = 'shiphook_listener_answers';

export const listenerUrl = (listenerId: string) => `${LISTENER_SCHEME}//${listenerId}`;
export const isListenerUrl = (url: string) => url.startsWith(`${LISTENER_SCHEME}//`);

/** A waiting attempt checks its request at least this often, whatever the notifications do. */
const POLL_MS = 1000;
const DELIVERY_ID_HEADER = 'x-shiphook-delivery-id';

export interface ListenerTransport {
  post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<SendResult>;
}

/** `databaseUrl` for LISTEN (answers arrive at once); without it the wait polls. */
export function createListenerTransport(db: Db, databaseUrl?: string): ListenerTransport {
  return {
    async post(url, headers, body, timeoutMs) {
      const started = performance.now();
      const failed = (reason: 'LISTENER_GONE' | 'LISTENER_TIMEOUT'): SendResult => ({
        status: 0,
        headers: {},
        body: '',
        totalTimeMs: Math.round(performance.now() - started),
        error: reasonText(reason),
        reason,
      });
      const listenerId = url.slice(`${LISTENER_SCHEME}//`.length);
      const id = Object.entries(headers).find(([name]) => name.toLowerCase() === DELIVERY_ID_HEADER)?.[1];
      if (!id) throw new Error('a request to a listener needs its X-Shiphook-Delivery-Id');
      // Watching before queueing: an answer cannot come before the watch hears of it.
      const watch = watchChannel(databaseUrl, LISTENER_ANSWERS_CHANNEL, (payload) => payload === id);
      try {
        const deadline = Date.now() + timeoutMs;
        const { rows } = await sql`
          with queued as (
            insert into listener_requests (id, listener_id, request_headers, request_body, expires_at)
            select ${id}, l.id, ${JSON.stringify(headers)}::jsonb, ${body}, ${new Date(deadline)} from listeners l where l.id = ${listenerId}
            returning listener_id)
          select pg_notify(${LISTENER_REQUESTS_CHANNEL}, listener_id) from queued`.execute(db);
        if (rows.length === 0) return failed('LISTENER_GONE');
        for (;;) {
          const state = await takeAnswer(db, id);
          if (state === 'gone') return failed('LISTENER_GONE');
          if (state !== 'waiting') return state;
          const left = deadline - Date.now();
          if (left <= 0) break;
          await watch.wait(Math.min(left, POLL_MS));
        }
        // Withdrawn, unless the answer came in just now.
        const late = await db.deleteFrom('listener_requests').where('id', '=', id).returningAll().executeTakeFirst();
        return late?.answered_at ? resultOf(late) : failed('LISTENER_TIMEOUT');
      } finally {
        watch.close();
      }
    },
  };
}

/** The answer (its request removed, the Payload keeps it), or whether the request still waits. */
async function takeAnswer(db: Db, id: string): Promise<SendResult | 'waiting' | 'gone'> {
  const row = await answeredRow(db, id);
  if (row) return resultOf(row);
  const waiting = await db.selectFrom('listener_requests').select('id').where('id', '=', id).executeTakeFirst();
  return waiting ? 'waiting' : 'gone';
}

const answeredRow = (db: Db, id: string) =>
  db.deleteFrom('listener_requests').where('id', '=', id).where('answered_at', 'is not', null).returningAll().executeTakeFirst();

/** The local endpoint's answer as the attempt's outcome: what the CLI measured and read. */
function resultOf(row: ListenerRequestRow): SendResult {
  const status = row.response_code ?? 0;
  return {
    status,
    headers: row.response_headers ?? {},
    body: row.response_body ?? '',
    totalTimeMs: row.total_time ?? 0,
    ...(status === 0 ? { error: `the listener's endpoint: ${row.error ?? 'no answer'}`, reason: 'FAILED' as const } : {}),
  };
}
