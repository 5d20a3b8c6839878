import type { ColumnType } from 'kysely';

/** A state change an operational event was emitted for, by its key (`webhook.failing:hook_…:<since>`): claimed once. */
export interface OperationalEventKeysTable {
  key: string;
  /** The event emitted for it; the key goes with the event. */
  event_id: string;
  created_at: ColumnType<Date, Date | undefined, never>;
}
