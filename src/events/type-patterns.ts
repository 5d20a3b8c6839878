import { EVENT_TYPES, type EventType } from './types';

/**
 * Event-type patterns: how a receiver names the events it wants (a webhook's
 * `event_types`, and anything else that filters by type). An entry is an event type
 * (`tracker.updated`), a wildcard `<prefix>.*` for every type under that prefix
 * (`tracker.*`, `shipment.invoice.*`, `shipment.*`; valid only when it takes at least
 * one type, so a typo is refused rather than quietly matching nothing), or `*` for
 * every type. Pure: no I/O, nothing but the catalogue.
 */
export const EVERY_TYPE = '*';

/** Every wildcard that takes at least one type, in the catalogue's order. */
export const TYPE_WILDCARDS: string[] = [
  ...new Set(EVENT_TYPES.flatMap((type) => type.split('.').slice(0, -1).map((_, i, parts) => `${parts.slice(0, i + 1).join('.')}.*`))),
];

/** Every valid entry: `*`, the wildcards, the types. */
export const TYPE_PATTERNS: string[] = [EVERY_TYPE, ...TYPE_WILDCARDS, ...EVENT_TYPES];

const VALID = new Set(TYPE_PATTERNS);

/** What is valid, in words: what a refusal says after why. */
export const VALID_PATTERNS_TEXT = `each entry is an event type (${EVENT_TYPES.join(', ')}), a family wildcard (${TYPE_WILDCARDS.join(', ')}) or * for every type`;

export const isTypePattern = (entry: unknown): entry is string => typeof entry === 'string' && VALID.has(entry);

/** Why `entry` is not a pattern (with what is valid), or undefined when it is one. */
export function patternProblem(entry: unknown): string | undefined {
  if (isTypePattern(entry)) return undefined;
  if (typeof entry !== 'string') return `must be a string: ${VALID_PATTERNS_TEXT}`;
  const shown = JSON.stringify(entry.length > 60 ? `${entry.slice(0, 60)}…` : entry);
  const hint =
    VALID.has(entry.toLowerCase()) ? ` (event types are lower case: ${entry.toLowerCase()})`
    : VALID.has(`${entry}.*`) ? ` (a whole family is written ${entry}.*)`
    : '';
  return `${shown} is not an event type or pattern${hint}: ${VALID_PATTERNS_TEXT}`;
}

/**
 * Parses a list of entries: the patterns as a set (each once, sorted), or why each bad entry
 * is bad, by its index. An empty list is for the caller to judge (a subscription refuses it).
 */
export function parseTypePatterns(entries: readonly unknown[]): { patterns: string[] } | { problems: { index: number; message: string }[] } {
  const problems = entries.flatMap((entry, index) => {
    const message = patternProblem(entry);
    return message ? [{ index, message }] : [];
  });
  return problems.length ? { problems } : { patterns: normalizeTypePatterns(entries as string[]) };
}

/** Each entry once, sorted: a list of patterns is a set. */
export const normalizeTypePatterns = (patterns: readonly string[]): string[] => [...new Set(patterns)].sort();

/** Whether an event of `type` is taken by `patterns`; `null` or `undefined` takes every type. */
export function matches(patterns: readonly string[] | null | undefined, type: string): boolean {
  if (!patterns) return true;
  return patterns.some((p) => p === type || p === EVERY_TYPE || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));
}

/** The catalogue's types that `patterns` take, in its order. */
export const typesMatching = (patterns: readonly string[] | null | undefined): EventType[] => EVENT_TYPES.filter((type) => matches(patterns, type));
