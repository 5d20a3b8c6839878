import type { EndShipperRow } from '../db/tables/shipping';
import { ApiError, FieldErrors } from '../errors/api-error';

/**
 * Address rules of EndShippers (seed 2.5, 7.2) and their normalisation, as the
 * real API returns addresses: text fields upper-cased, state as its two-letter
 * code, ZIP as `12345` or `12345-6789`, phone as digits only; email and street2
 * kept as given (street2 `""` stays `""`, absent or null is null).
 */
/** An EndShipper's address fields, as stored. */
export type NormalAddress = Omit<EndShipperRow, 'id' | 'user_id' | 'mode' | 'created_at' | 'updated_at'>;

const FIELDS = ['name', 'company', 'street1', 'street2', 'city', 'state', 'zip', 'country', 'phone', 'email'] as const;
const REQUIRED = ['street1', 'city', 'state', 'zip', 'country', 'phone', 'email'] as const;
const CONTROL = /[\u0000-\u001f\u007f]/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

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

/** Validates a whole EndShipper address (creation and PUT alike) and normalises it. */
export function parseEndShipperAddress(input: Record<string, unknown>): NormalAddress {
  const raw: Record<string, string | null | undefined> = {};
  const bad = new FieldErrors();
  for (const field of FIELDS) {
    const value = input[field];
    if (value === undefined || value === null) raw[field] = value as null | undefined;
    else if (typeof value !== 'string') bad.add(field, 'must be a string');
    else raw[field] = value.trim();
  }
  bad.throwIfAny('ADDRESS.PARAMETERS.INVALID', 'Parameters required for the address are missing or invalid.');

  const control = new FieldErrors();
  for (const field of FIELDS) if (raw[field] && CONTROL.test(raw[field]!)) control.add(field, 'contains a control character');
  control.throwIfAny('ADDRESS.PARAMETERS.INVALID_CHARACTER', 'An address parameter has an invalid character.');

  const country = raw.country;
  if (country && !/^[A-Za-z]{2}$/.test(country)) {
    throw new ApiError('ADDRESS.COUNTRY.INVALID', '`country` must be a two-character ISO country code.', [{ field: 'country', message: 'must be a two-letter ISO country code' }]);
  }

  const errors = new FieldErrors();
  for (const field of REQUIRED) if (!raw[field]) errors.add(field, 'is required');
  if (!raw.name && !raw.company) errors.add('name', 'name or company is required');
  if (country && country.toUpperCase() !== 'US') errors.add('country', 'must be US: EndShippers are US addresses only');
  const state = raw.state ? normalizeState(raw.state) : undefined;
  if (raw.state && !state) errors.add('state', 'must be a US state or its two-letter code');
  const zip = raw.zip ? normalizeZip(raw.zip) : undefined;
  if (raw.zip && !zip) errors.add('zip', 'must be a 5-digit ZIP or ZIP+4');
  const phone = raw.phone ? normalizePhone(raw.phone) : undefined;
  if (raw.phone && !phone) errors.add('phone', 'must be a 10-digit US phone number');
  if (raw.email && !EMAIL.test(raw.email)) errors.add('email', 'must be an email address');
  for (const field of FIELDS) if ((raw[field]?.length ?? 0) > 255) errors.add(field, 'must be at most 255 characters');
  errors.throwIfAny('ADDRESS.PARAMETERS.INVALID', 'Parameters required for the address are missing or invalid.');

  const upper = (v: string | null | undefined) => (v ? v.toUpperCase() : null);
  return {
    name: upper(raw.name),
    company: upper(raw.company),
    street1: raw.street1!.toUpperCase(),
    street2: raw.street2 === '' ? '' : upper(raw.street2),
    city: raw.city!.toUpperCase(),
    state: state!,
    zip: zip!,
    country: 'US',
    phone: phone!,
    email: raw.email!,
  };
}
