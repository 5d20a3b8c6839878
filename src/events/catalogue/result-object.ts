import { Mode } from '../../account/api-keys.schema';
import { z } from '../../schema';
import type { EventType } from '../types';

/**
 * What every `result` of the event catalogue is built from: the fields every object
 * of the API carries (`id` with its type prefix, `object`, `mode`, the timestamps), and
 * a family of event types with the schema of their `result` and an example per type.
 * Result schemas are open (additional properties allowed): a result with more fields
 * than the catalogue names is still one of its objects.
 */
export const stamp = z.string().openapi({ format: 'date-time', example: '2026-01-31T12:00:00Z' });

/** `id`, `object` and `mode`, first in every result. */
export const identity = <O extends string>(object: O, idExample: string) => ({
  id: z.string().openapi({ description: 'The object\'s id: what `GET /v2/events?object_id=` finds its events by.', example: idExample }),
  object: z.literal(object),
  mode: Mode,
});

/** `created_at` and `updated_at`, last in every result. */
export const timestamps = { created_at: stamp, updated_at: stamp };

/** A dollar amount as the API writes money: a string. */
export const money = (example: string) => z.string().openapi({ example, description: 'US dollars.' });

/** One event as delivered, reduced to what its type decides: the `result` and the `previous_attributes`. */
export interface EventExample<R = Record<string, unknown>> {
  result: R;
  previous_attributes: Record<string, unknown>;
}

/** The event types whose `result` is one kind of object, that object's schema and an example per type. */
export interface ResultFamily<T extends EventType = EventType> {
  schema: z.ZodType;
  examples: Record<T, EventExample>;
}

/** Checks each example against the schema's declared fields when it is written (a unit test parses them too). */
export const family = <S extends z.ZodType, T extends EventType>(schema: S, examples: Record<T, EventExample<z.input<S>>>): ResultFamily<T> => ({
  schema,
  examples: examples as Record<T, EventExample>,
});
