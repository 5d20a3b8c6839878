/**
 * Wire formats shared by every serializer (COMPATIBILITY.md "Timestamps"):
 * webhooks, keys and users as `…Z` without milliseconds, events with milliseconds,
 * EndShippers with a `+00:00` offset. Money is a string of US dollars.
 */
export const isoSeconds = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
export const isoMillis = (d: Date): string => d.toISOString();
export const isoOffset = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, '+00:00');

/** Dollar amounts with five decimals, as the real API shows balances ("0.00000"). */
export function dollars(value: string | null): string | null {
  if (value === null) return null;
  return Number(value).toFixed(5);
}

/** Rates without trailing zeros ("0.0375000000" → "0.0375"). */
export function rate(value: string): string {
  return String(Number(value));
}
