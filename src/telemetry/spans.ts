import { type Attributes, context, type Context, type Link, type Span, type SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { errorText } from '../errors/error-text';
import { maskSecrets } from '../log';
import { VERSION } from '../version';
import { tracingStarted } from './sdk';

/**
 * The spans shiphook makes itself, around the steps of an event's path that Temporal's
 * interceptors do not see: the API request, the publish transaction, the dispatch, each
 * POST (docs/operations.md, Traces, lists them with their attributes). Never a secret
 * in one: URLs are given masked, headers and bodies are never attributes.
 */

/** The tracer of shiphook's own spans. */
export const shiphookTracer = () => trace.getTracer('shiphook', VERSION);

export interface SpanSpec {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
  /** The span's parent; the active context when left out. */
  parent?: Context;
}

/**
 * Runs `fn` in a new span, active while it runs and ended when it settles; an error
 * marks it failed. Without tracing, runs `fn` alone (no span, `spec` never called).
 */
export async function inSpan<T>(name: string, spec: () => SpanSpec, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (!tracingStarted()) return fn(undefined);
  const { parent = context.active(), ...options } = spec();
  return shiphookTracer().startActiveSpan(name, options, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Marks a span failed, saying why in masked words (an error may quote a URL with its credentials). */
export function failed(span: Span, why: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: maskSecrets(errorText(why, 300)) });
}
