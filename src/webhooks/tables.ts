import type { ColumnType, Insertable, Selectable, Updateable } from 'kysely';
import type { Mode } from '../account/tables';

export interface CustomHeader {
  name: string;
  value: string;
}

export interface WebhooksTable {
  id: string;
  user_id: string;
  mode: Mode;
  url: string;
  webhook_secret: string | null;
  /** After a rotation: still signs beside the new secret until `previous_secret_expires_at`. */
  previous_webhook_secret: ColumnType<string | null, string | null | undefined, string | null>;
  previous_secret_expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  custom_headers: ColumnType<CustomHeader[], string | undefined, string>;
  /** The event types and patterns it receives (src/events/type-patterns.ts), as a set; null: every type. */
  event_types: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  /** Deliveries per second at most, over every worker (src/engine/webhook-rate-limit.ts); null: no limit. */
  rate_limit: ColumnType<number | null, number | null | undefined, number | null>;
  /** `per_object`: events about one object are sent one after another (src/engine/ordering.ts). */
  ordering: ColumnType<DeliveryOrdering, DeliveryOrdering | undefined, DeliveryOrdering>;
  disabled_at: Date | null;
  disabled_reason: ColumnType<DisabledReason | null, DisabledReason | null | undefined, DisabledReason | null>;
  /** For `sustained_failures`: the policy that applied when it was disabled (JSON). */
  disabled_policy: ColumnType<DisablePolicy | null, string | null | undefined, string | null>;
  /** The last re-enable (an update of a disabled or failing webhook): its health starts afresh then. */
  reenabled_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  failing_since: Date | null;
  consecutive_failures: ColumnType<number, number | undefined, number>;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  deleted_at: Date | null;
}

export type WebhookRow = Selectable<WebhooksTable>;
export type NewWebhookRow = Insertable<WebhooksTable>;
export type WebhookUpdate = Updateable<WebhooksTable>;

/**
 * How a webhook's deliveries are ordered: `none`, each event on its own (the default), or
 * `per_object`, the events about one object (`result.id`) one after another.
 */
export const DELIVERY_ORDERINGS = ['none', 'per_object'] as const;
export type DeliveryOrdering = (typeof DELIVERY_ORDERINGS)[number];

/** The highest `rate_limit`, deliveries per second. */
export const MAX_RATE_LIMIT = 1000;

/**
 * A webhook's health as the health view reports it. `waiting`: re-enabled, and no
 * attempt since (its next delivery will tell).
 */
export const HEALTH_STATES = ['healthy', 'failing', 'disabled', 'untested', 'waiting'] as const;
export type HealthState = (typeof HEALTH_STATES)[number];

/**
 * Why a webhook is disabled: its endpoint answered 410 Gone, or its attempts failed
 * for as many times and as long as the policy (SHIPHOOK_DISABLE_AFTER_FAILURES,
 * SHIPHOOK_DISABLE_AFTER) allows.
 */
export const DISABLED_REASONS = ['endpoint_gone', 'sustained_failures'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/** The disable policy as applied: at least `failures` attempts in a row over at least `afterMs`. */
export interface DisablePolicy {
  failures: number;
  afterMs: number;
}
