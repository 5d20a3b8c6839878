import type { Mode } from '../db/tables/api-keys';
import type { UserRow } from '../db/tables/users';

/** Who is calling: the key's user (a parent or a child) and the key's mode. */
export interface Principal {
  user: UserRow;
  mode: Mode;
  keyId: string;
}
