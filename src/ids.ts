import { randomBytes } from 'node:crypto';

/**
 * Ids are a type prefix and 32 lowercase hex digits laid out like a UUIDv7:
 * 48 bits of milliseconds, then randomness. Within one process ids are strictly
 * increasing (the random part is bumped inside one millisecond), so ordering by
 * id is ordering by creation and `before_id`/`after_id` are index range scans.
 */
export type IdPrefix =
  | 'user' | 'ak' | 'hook' | 'evt' | 'payload' | 'es' | 'shp' | 'rate' | 'trk' | 'adr' | 'prcl' | 'pl' | 'fee' | 'ps' | 'replay' | 'lst';

let lastMs = 0n;
let lastRandom = 0n;
const RANDOM_BITS = 80n;
const RANDOM_MAX = (1n << RANDOM_BITS) - 1n;

function next(): bigint {
  const now = BigInt(Date.now());
  if (now > lastMs) {
    lastMs = now;
    lastRandom = BigInt('0x' + randomBytes(10).toString('hex')) >> 1n; // leave room to increment
  } else if (lastRandom < RANDOM_MAX) {
    lastRandom += 1n + BigInt(randomBytes(1)[0]!);
  } else {
    lastMs += 1n;
    lastRandom = 0n;
  }
  return (lastMs << RANDOM_BITS) | (lastRandom & RANDOM_MAX);
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${next().toString(16).padStart(32, '0')}`;
}

/** The shape of an id of this type: the prefix, `_` and 32 lowercase hex digits. */
export const idPattern = (prefix: IdPrefix) => new RegExp(`^${prefix}_[0-9a-f]{32}$`);

export function hasPrefix(id: unknown, prefix: IdPrefix): id is string {
  return typeof id === 'string' && idPattern(prefix).test(id);
}

/** The creation time encoded in an id (used to check datetime scopes cheaply). */
export function idTime(id: string): Date {
  const hex = id.slice(id.indexOf('_') + 1, id.indexOf('_') + 13);
  return new Date(parseInt(hex, 16));
}

/** The smallest id of `prefix` made at `time`: every id made before it sorts lower (a range bound for time). */
export function firstIdAt(prefix: IdPrefix, time: Date): string {
  return `${prefix}_${Math.max(0, Math.floor(time.getTime())).toString(16).padStart(12, '0')}${'0'.repeat(20)}`;
}
