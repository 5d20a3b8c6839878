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
  disabled_at: Date | null;
  failing_since: Date | null;
  consecutive_failures: ColumnType<number, number | undefined, number>;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  deleted_at: Date | null;
}

export type WebhookRow = Selectable<WebhooksTable>;
export type NewWebhookRow = Insertable<WebhooksTable>;
export type WebhookUpdate = Updateable<WebhooksTable>;

/** A webhook's health as the health view reports it. */
export const HEALTH_STATES = ['healthy', 'failing', 'disabled', 'untested'] as const;
export type HealthState = (typeof HEALTH_STATES)[number];
