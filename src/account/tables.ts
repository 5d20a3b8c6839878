import type { ColumnType, Insertable, Selectable, Updateable } from 'kysely';

/** The two modes of every key and every customer-owned row. */
export const MODES = ['test', 'production'] as const;
export type Mode = (typeof MODES)[number];

/** The creation and update times of the customer's objects (set by the database, never by an update). */
export type Created = ColumnType<Date, Date | undefined, never>;
export type Updated = ColumnType<Date, Date | undefined, Date>;

type Numeric = ColumnType<string, string | number, string | number>;
type NullableNumeric = ColumnType<string | null, string | number | null, string | number | null>;
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface UsersTable {
  id: string;
  parent_id: string | null;
  name: string;
  email: string | null;
  phone_number: string | null;
  password_hash: string | null;
  verified: ColumnType<boolean, boolean | undefined, boolean>;
  default_carbon_offset: ColumnType<boolean, boolean | undefined, boolean>;
  has_elevate_access: ColumnType<boolean, boolean | undefined, boolean>;
  referral_customer: ColumnType<boolean, boolean | undefined, boolean>;
  end_shipper_enabled: ColumnType<boolean, boolean | undefined, boolean>;
  balance: ColumnType<string, string | number | undefined, string | number>;
  price_per_shipment: ColumnType<string, string | number | undefined, string | number>;
  recharge_amount: NullableNumeric;
  secondary_recharge_amount: NullableNumeric;
  recharge_threshold: NullableNumeric;
  has_billing_method: boolean | null;
  cc_fee_rate: ColumnType<string, string | number | undefined, string | number>;
  default_insurance_amount: NullableNumeric;
  insurance_fee_rate: ColumnType<string, string | number | undefined, string | number>;
  insurance_fee_minimum: ColumnType<string, string | number | undefined, string | number>;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Date | null;
}

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type { Numeric };

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
