import type { EndShipperRow } from './tables';
import type { z } from '../schema';
import type { EndShipperAddress } from './addresses.schema';

export type EndShipperAddressInput = z.output<typeof EndShipperAddress>;

/**
 * Address rules of EndShippers (the API specification, 2.5 and 7.2) and their normalisation, as the
 * real API returns addresses: text fields upper-cased, state as its two-letter
 * code, ZIP as `12345` or `12345-6789`, phone as digits only; email and street2
 * kept as given (street2 `""` stays `""`, absent or null is null).
 */
/** An EndShipper's address fields, as stored. */
export type NormalAddress = Omit<EndShipperRow, 'id' | 'user_id' | 'mode' | 'created_at' | 'updated_at'>;


export const US_STATES: Record<string, string> = {
  ALABAMA: 'AL', ALASKA: 'AK', ARIZONA: 'AZ', ARKANSAS: 'AR', CALIFORNIA: 'CA', COLORADO: 'CO', CONNECTICUT: 'CT',
  DELAWARE: 'DE', 'DISTRICT OF COLUMBIA': 'DC', FLORIDA: 'FL', GEORGIA: 'GA', HAWAII: 'HI', IDAHO: 'ID', ILLINOIS: 'IL',
  INDIANA: 'IN', IOWA: 'IA', KANSAS: 'KS', KENTUCKY: 'KY', LOUISIANA: 'LA', MAINE: 'ME', MARYLAND: 'MD',
  MASSACHUSETTS: 'MA', MICHIGAN: 'MI', MINNESOTA: 'MN', MISSISSIPPI: 'MS', MISSOURI: 'MO', MONTANA: 'MT', NEBRASKA: 'NE',
  NEVADA: 'NV', 'NEW HAMPSHIRE': 'NH', 'NEW JERSEY': 'NJ', 'NEW MEXICO': 'NM', 'NEW YORK': 'NY', 'NORTH CAROLINA': 'NC',
  'NORTH DAKOTA': 'ND', OHIO: 'OH', OKLAHOMA: 'OK', OREGON: 'OR', PENNSYLVANIA: 'PA', 'RHODE ISLAND': 'RI',
  'SOUTH CAROLINA': 'SC', 'SOUTH DAKOTA': 'SD', TENNESSEE: 'TN', TEXAS: 'TX', UTAH: 'UT', VERMONT: 'VT', VIRGINIA: 'VA',
  WASHINGTON: 'WA', 'WEST VIRGINIA': 'WV', WISCONSIN: 'WI', WYOMING: 'WY', 'PUERTO RICO': 'PR', GUAM: 'GU',
  'VIRGIN ISLANDS': 'VI', 'AMERICAN SAMOA': 'AS', 'NORTHERN MARIANA ISLANDS': 'MP',
};
const STATE_CODES = new Set(Object.values(US_STATES));

export function normalizeState(value: string): string | undefined {
  const upper = value.trim().toUpperCase().replace(/\s+/g, ' ');
  if (STATE_CODES.has(upper)) return upper;
  return US_STATES[upper];
}

export function normalizeZip(value: string): string | undefined {
  const digits = value.trim().replace(/[\s-]/g, '');
  if (/^\d{5}$/.test(digits)) return digits;
  if (/^\d{9}$/.test(digits)) return `${digits.slice(0, 5)}-${digits.slice(5)}`;
  return undefined;
}

export function normalizePhone(value: string): string | undefined {
  let digits = value.replace(/\D/g, '');
  if (digits.length === 11 && digits.startsWith('1')) digits = digits.slice(1);
  return digits.length === 10 ? digits : undefined;
}

/** Normalises a whole EndShipper address that passed EndShipperAddress (creation and PUT alike). */
export function normalEndShipperAddress(a: EndShipperAddressInput): NormalAddress {
  const upper = (v: string | null | undefined) => (v ? v.toUpperCase() : null);
  return {
    name: upper(a.name),
    company: upper(a.company),
    street1: a.street1.toUpperCase(),
    street2: a.street2 === '' ? '' : upper(a.street2),
    city: a.city.toUpperCase(),
    state: normalizeState(a.state)!,
    zip: normalizeZip(a.zip)!,
    country: 'US',
    phone: normalizePhone(a.phone)!,
    email: a.email,
  };
}
