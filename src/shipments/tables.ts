import type { ColumnType, Selectable } from 'kysely';
import type { Created, Mode, Updated } from '../account/tables';

type Json<T> = ColumnType<T, string, string>;

export interface ShipmentsTable {
  id: string;
  user_id: string;
  mode: Mode;
  reference: string | null;
  from_address: Json<Record<string, unknown>>;
  to_address: Json<Record<string, unknown>>;
  parcel: Json<Record<string, unknown>>;
  options: Json<Record<string, unknown>>;
  rates: Json<Record<string, unknown>[]>;
  usps_zone: number;
  end_shipper_id: string | null;
  selected_rate: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  tracking_code: string | null;
  postage_label: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  fees: ColumnType<Record<string, unknown>[], string | undefined, string>;
  insurance: string | null;
  tracker_id: string | null;
  created_at: Created;
  updated_at: Updated;
}

/** The statuses a simulated tracker moves through, in order. */
export const TRACKER_STATUSES = ['pre_transit', 'in_transit', 'out_for_delivery', 'delivered'] as const;
export type TrackerStatus = (typeof TRACKER_STATUSES)[number];

export interface TrackersTable {
  id: string;
  user_id: string;
  mode: Mode;
  shipment_id: string;
  tracking_code: string;
  status: TrackerStatus;
  weight: number;
  created_at: Created;
  updated_at: Updated;
}

export type ShipmentRow = Selectable<ShipmentsTable>;
export type TrackerRow = Selectable<TrackersTable>;
