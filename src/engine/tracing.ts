import { context, type Link, ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import type { ClientInterceptors } from '@temporalio/client';
import type { EventRow } from '../events/tables';
import { tracingStarted } from '../telemetry/sdk';
import { inSpan } from '../telemetry/spans';
import { storedContext, storedSpan } from '../telemetry/stored-context';

/**
 * The engine's part of a trace (docs/operations.md, Traces): Temporal's own interceptors
 * carry the trace from a workflow's start into the workflow and its activities
 * (`@temporalio/interceptors-opentelemetry`; the worker's side: worker-tracing.ts), and
 * the dispatch joins an event's delivery to the trace its publish began in another
 * process, through the `traceparent` stored with the event.
 */

/** Temporal's client interceptors, for a client whose starts and signals carry the active trace; none without tracing. */
export async function clientTracing(): Promise<ClientInterceptors | undefined> {
  if (!tracingStarted()) return undefined;
  const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry/lib/client');
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}

/** What a dispatch span says of its event. */
export type DispatchedEvent = Pick<EventRow, 'id' | 'description' | 'user_id' | 'mode' | 'replay_id' | 'traceparent'>;

/**
 * Runs the start of an event's delivery workflow in its dispatch span. A first
 * dispatch continues the trace of its publish (a child of the stored span); a replay
 * or recovery is a new run of an event published earlier: its dispatch belongs to the
 * trace of what asked for it (the operator's or account's request; a trace of its own
 * when a dispatcher carries out a broad replay) and links to the event's.
 */
export function inDispatchSpan<T>(event: DispatchedEvent, opts: { replay: boolean; targets: number; eager: boolean }, start: () => Promise<T>): Promise<T> {
  return inSpan(
    'dispatch event',
    () => {
      const published = storedSpan(event.traceparent);
      const links: Link[] = opts.replay && published ? [{ context: published, attributes: { 'shiphook.link': 'published' } }] : [];
      return {
        kind: SpanKind.PRODUCER,
        parent: opts.replay ? context.active() : (storedContext(event.traceparent) ?? ROOT_CONTEXT),
        links,
        attributes: {
          'shiphook.event.id': event.id,
          'shiphook.event.type': event.description,
          'shiphook.user.id': event.user_id,
          'shiphook.mode': event.mode,
          'shiphook.deliveries': opts.targets,
          'shiphook.dispatch.eager': opts.eager,
          'shiphook.replay': opts.replay,
          ...(event.replay_id ? { 'shiphook.replay.id': event.replay_id } : {}),
        },
      };
    },
    start,
  );
}
