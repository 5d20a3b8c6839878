import type { ColumnType, Selectable } from 'kysely';
import type { Mode } from '../account/tables';

/**
 * A listener (`shiphook listen`): its row in `webhooks` (same id, `lst_…`; URL
 * `listen://lst_…`) is what publish and the engine deliver to; this row holds what only
 * a listener has.
 */
export interface ListenersTable {
  id: string;
  user_id: string;
  mode: Mode;
  /** Where its CLI forwards, as the CLI said: shown only, never connected to by the server. */
  forward_to: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  /** The last time a stream of it was open (its heartbeat marks it): the grace period runs from here. */
  last_seen_at: ColumnType<Date, Date | undefined, Date>;
}

type Headers = ColumnType<Record<string, string>, string, never>;

/** One delivery attempt to a listener, queued for its CLI until answered or withdrawn at the attempt's timeout. */
export interface ListenerRequestsTable {
  /** The attempt's Payload id (`X-Shiphook-Delivery-Id`). */
  id: string;
  listener_id: string;
  request_headers: Headers;
  request_body: string;
  created_at: ColumnType<Date, Date | undefined, never>;
  /** The attempt's timeout: after it the request is withdrawn and the retry schedule takes over. */
  expires_at: Date;
  answered_at: ColumnType<Date | null, never, Date>;
  /** The local endpoint's answer, as the CLI reported it (0: none; `error` says why). */
  response_code: ColumnType<number | null, never, number>;
  response_headers: ColumnType<Record<string, string> | null, never, string>;
  response_body: ColumnType<string | null, never, string>;
  total_time: ColumnType<number | null, never, number>;
  error: ColumnType<string | null, never, string | null>;
}

export type ListenerRow = Selectable<ListenersTable>;
export type ListenerRequestRow = Selectable<ListenerRequestsTable>;
