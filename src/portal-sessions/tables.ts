import type { ColumnType, Selectable } from 'kysely';
import type { Mode } from '../account/tables';

export interface PortalSessionsTable {
  id: string;
  /** SHA-256 of the link's token; the token itself is never stored. */
  token_digest: Buffer;
  user_id: string;
  mode: Mode;
  /** The key that opened it: the session ends when that key is disabled or deleted. */
  api_key_id: string;
  expires_at: Date;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export type PortalSessionRow = Selectable<PortalSessionsTable>;
