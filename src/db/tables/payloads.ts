import type { ColumnType, Selectable } from 'kysely';

type Json = ColumnType<Record<string, string>, string, string>;

/** One delivery attempt: what was sent and what came back. */
export interface PayloadsTable {
  id: string;
  event_id: string;
  webhook_id: string;
  request_url: string;
  request_headers: Json;
  request_body: string;
  response_code: number;
  response_headers: Json;
  response_body: string;
  total_time: number;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export type PayloadRow = Selectable<PayloadsTable>;
