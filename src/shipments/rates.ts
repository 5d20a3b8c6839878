import type { Mode } from '../account/tables';
import { newId } from '../ids';

/**
 * SimPost: shiphook's built-in, simulated carrier. Deterministic: a rate depends
 * only on the billed weight (actual or dimensional, in whole pounds), the zone
 * (1–9, from the distance between the first three digits of the two ZIPs) and the
 * service. Not a real carrier's price list.
 */
export const CARRIER = 'SimPost';

const SERVICES = [
  { service: 'Ground', base: 4.5, perLb: 0.35, perZone: 0.4, days: (zone: number) => 2 + Math.ceil(zone / 2) },
  { service: 'Priority', base: 7.0, perLb: 0.6, perZone: 0.75, days: (zone: number) => 1 + Math.ceil(zone / 4) },
  { service: 'Express', base: 24.0, perLb: 1.1, perZone: 1.5, days: () => 1 },
] as const;

export function zoneBetween(fromZip: string, toZip: string): number {
  const distance = Math.abs(Number(fromZip.slice(0, 3)) - Number(toZip.slice(0, 3)));
  return Math.min(9, 1 + Math.floor(distance / 111));
}

export interface ParcelSize {
  weight: number; // ounces
  length?: number; // inches
  width?: number;
  height?: number;
}

export function billedPounds(parcel: ParcelSize): number {
  const actual = Math.ceil(parcel.weight / 16);
  const dimensional = parcel.length && parcel.width && parcel.height ? Math.ceil((parcel.length * parcel.width * parcel.height) / 166) : 0;
  return Math.max(1, actual, dimensional);
}

export function quoteRates(shipmentId: string, mode: Mode, parcel: ParcelSize, zone: number, now: string) {
  const lb = billedPounds(parcel);
  return SERVICES.map((s) => {
    const price = (s.base + s.perLb * lb + s.perZone * zone).toFixed(2);
    const days = s.days(zone);
    return {
      id: newId('rate'),
      object: 'Rate',
      mode,
      carrier: CARRIER,
      service: s.service,
      rate: price,
      currency: 'USD',
      list_rate: price,
      list_currency: 'USD',
      retail_rate: (Number(price) * 1.15).toFixed(2),
      retail_currency: 'USD',
      delivery_days: days,
      est_delivery_days: days,
      delivery_date: null,
      delivery_date_guaranteed: false,
      carrier_account_id: null,
      billing_type: 'shiphook',
      shipment_id: shipmentId,
      created_at: now,
      updated_at: now,
    };
  });
}
