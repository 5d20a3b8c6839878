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
  /** Until the link is used; then until the session it opened ends. */
  expires_at: Date;
  /** The link works once: set by its first visit. */
  link_used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** SHA-256 of the session token in the browser's cookie, set when the link is used. */
  session_digest: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export type PortalSessionRow = Selectable<PortalSessionsTable>;
