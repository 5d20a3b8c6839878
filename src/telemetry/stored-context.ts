import { context, type Context, defaultTextMapGetter, defaultTextMapSetter, isSpanContextValid, ROOT_CONTEXT, type SpanContext, trace } from '@opentelemetry/api';
import { tracingStarted } from './sdk';

/**
 * A trace's context kept in the database, for the step that another process takes
 * later: an event is published in the api and dispatched by a worker, and its
 * dispatch continues the publish's trace from the `traceparent` stored with it (a
 * replay or recovery links to it). A W3C `traceparent` string, made and read by the
 * SDK's propagator.
 */

/** The active span as a `traceparent` to store with what is committed now; undefined without tracing or outside any span. */
export function traceparentNow(): string | undefined {
  const w3c = tracingStarted()?.w3c;
  if (!w3c) return undefined;
  const carrier: Record<string, string> = {};
  w3c.inject(context.active(), carrier, defaultTextMapSetter);
  return carrier.traceparent;
}

/** The context a stored `traceparent` names (to continue its trace); undefined without tracing or without a valid one. */
export function storedContext(traceparent: string | null | undefined): Context | undefined {
  const w3c = tracingStarted()?.w3c;
  if (!w3c || !traceparent) return undefined;
  const stored = w3c.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
  const span = trace.getSpanContext(stored);
  return span && isSpanContextValid(span) ? stored : undefined;
}

/** The span a stored `traceparent` names (to link to its trace). */
export const storedSpan = (traceparent: string | null | undefined): SpanContext | undefined => {
  const stored = storedContext(traceparent);
  return stored && trace.getSpanContext(stored);
};
