import type { Selectable } from 'kysely';
import type { Created, Mode, Updated } from '../account/tables';

export interface EndShippersTable {
  id: string;
  user_id: string;
  mode: Mode;
  name: string | null;
  company: string | null;
  street1: string;
  street2: string | null;
  city: string;
  state: string;
  zip: string;
  country: string;
  phone: string;
  email: string;
  created_at: Created;
  updated_at: Updated;
}

export type EndShipperRow = Selectable<EndShippersTable>;
