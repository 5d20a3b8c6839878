import type { ColumnType, Insertable, Selectable } from 'kysely';

export type Mode = 'test' | 'production';

export interface ApiKeysTable {
  id: string;
  user_id: string;
  mode: Mode;
  key: string;
  key_digest: Buffer;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  deleted_at: Date | null;
}

export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKeyRow = Insertable<ApiKeysTable>;
