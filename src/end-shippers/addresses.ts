/**
 * Address rules of EndShippers (the API specification, 2.5 and 7.2): US states by name
 * or code, ZIP codes and phone numbers, each read into the form the real API returns
 * (state as its two-letter code, ZIP as `12345` or `12345-6789`, phone as digits only).
 */

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

/** Each letter in either case, each run of spaces as any run of (non-control) white space: the OpenAPI pattern has no flags. */
const anyCase = (text: string) => text.replace(/[A-Z]/g, (c) => `[${c}${c.toLowerCase()}]`).replace(/ /g, '[^\\S\\u0000-\\u001f\\u007f]+');
/** What normalizeState reads (before trimming): a state's code or name, in any case. */
export const STATE = new RegExp(`^(?:${[...STATE_CODES, ...Object.keys(US_STATES)].map(anyCase).join('|')})$`);
/** What normalizeZip reads: 5 or 9 digits, spaces and hyphens anywhere. */
export const ZIP = /^[\s-]*(?:[0-9][\s-]*){5}(?:(?:[0-9][\s-]*){4})?$/;
/** What normalizePhone reads: 10 digits, or 11 starting with 1, anything else between them. */
export const PHONE = /^[^0-9]*(?:1[^0-9]*)?(?:[0-9][^0-9]*){10}$/;

export function normalizeState(value: string): string | undefined {
  const upper = value.trim().toUpperCase().replace(/\s+/g, ' ');
  if (STATE_CODES.has(upper)) return upper;
  return US_STATES[upper];
}

export function normalizeZip(value: string): string | undefined {
  if (!ZIP.test(value)) return undefined;
  const digits = value.replace(/\D/g, '');
  return digits.length === 5 ? digits : `${digits.slice(0, 5)}-${digits.slice(5)}`;
}

export function normalizePhone(value: string): string | undefined {
  if (!PHONE.test(value)) return undefined;
  const digits = value.replace(/\D/g, '');
  return digits.length === 11 ? digits.slice(1) : digits;
}
