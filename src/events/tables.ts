import type { ColumnType, Selectable } from 'kysely';
import type { Mode } from '../account/tables';

/** An event's status (the API specification, 3.3); its derivation is in status.ts. */
export const EVENT_STATUSES = ['in_queue', 'retrying', 'completed', 'failed'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];
type Json = ColumnType<Record<string, unknown>, string, string>;

export interface EventsTable {
  id: string;
  user_id: string;
  mode: Mode;
  description: string;
  status: ColumnType<EventStatus, EventStatus | undefined, EventStatus>;
  result: Json;
  previous_attributes: Json;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  dispatched_at: Date | null;
  /** A test event (POST /v2/webhooks/:id/test): delivered to one webhook, marked `X-Shiphook-Test: true`. */
  test: ColumnType<boolean, boolean | undefined, boolean>;
  /** Set by the dispatcher that claimed the event; another may claim it once this has passed. */
  dispatch_lease_until: Date | null;
  /** Temporal refused the start for good (engine/outbox.ts); not claimed again until replayed. */
  dispatch_failed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  dispatch_error: ColumnType<string | null, string | null | undefined, string | null>;
  /** The broad replay or recovery (replays.id) that asked for this event to be started again, or the event's own id for a replay of it alone; cleared once started. */
  replay_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The trace it was published in (W3C `traceparent`; null without tracing): its dispatch continues it (src/engine/tracing.ts). */
  traceparent: ColumnType<string | null, string | null | undefined, never>;
}

export interface ReplaysTable {
  id: string;
  filter: Json;
  matched: number;
  created_at: ColumnType<Date, Date | undefined, never>;
  /** A recovery's account, mode and webhook (POST /v2/webhooks/:id/recover); null for an operator's replay. */
  user_id: ColumnType<string | null, string | null | undefined, never>;
  mode: ColumnType<Mode | null, Mode | null | undefined, never>;
  webhook_id: ColumnType<string | null, string | null | undefined, never>;
  /** When its last event was started again (engine/replay-end.ts). */
  ended_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** One (event, webhook) delivery: waiting for a 2XX, acknowledged, or given up. */
export const DELIVERY_STATES = ['pending', 'completed', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface EventDeliveriesTable {
  event_id: string;
  webhook_id: string;
  url: string;
  state: ColumnType<DeliveryState, DeliveryState | undefined, DeliveryState>;
  attempts: ColumnType<number, number | undefined, number>;
  /** When the next attempt is planned, while the delivery is pending after a failed one; null otherwise. */
  next_attempt_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export type EventRow = Selectable<EventsTable>;
export type EventDeliveryRow = Selectable<EventDeliveriesTable>;

type Headers = ColumnType<Record<string, string>, string, string>;

/** One delivery attempt: what was sent and what came back. */
export interface PayloadsTable {
  id: string;
  event_id: string;
  webhook_id: string;
  request_url: string;
  request_headers: Headers;
  request_body: string;
  response_code: number;
  response_headers: Headers;
  response_body: string;
  total_time: number;
  /** The attempt's number (`X-Shiphook-Attempt`); null on Payloads recorded before it was kept. */
  attempt: ColumnType<number | null, number | undefined, never>;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export type PayloadRow = Selectable<PayloadsTable>;
