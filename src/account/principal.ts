import type { Mode } from './tables';
import type { UserRow } from './tables';

/** Who is calling: the key's user (a parent or a child) and the key's mode. */
export interface Principal {
  user: UserRow;
  mode: Mode;
  keyId: string;
}
