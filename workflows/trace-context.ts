import { type Headers, type WorkflowInterceptors, workflowInfo } from '@temporalio/workflow';
import { deliverEvent } from './deliver-event';

/**
 * Workflow interceptors of the traced workflow bundle only (src/engine/bundle.ts): the
 * trace context that Temporal's OpenTelemetry client interceptor put into a delivery's
 * start (its `_tracer-data` header) is handed on, unchanged, to each activity the run
 * schedules, where Temporal's activity interceptor continues the trace
 * (src/engine/worker-tracing.ts). Only a delivery's: a long-lived workflow's start is
 * no context for what it does days later.
 *
 * Not Temporal's own workflow interceptors: each run of those keeps an AsyncLocalStorage
 * of its own, and Node makes every promise of the workflow thread carry every enabled
 * one, so the cost of each promise grows with the runs in the worker's cache (a full
 * cache ran the workflow thread out of heap). No span is made in the sandbox.
 */
export const TRACE_HEADER = '_tracer-data';

export const interceptors = (): WorkflowInterceptors => {
  let trace: Headers | undefined;
  const withTrace = <T extends { headers: Headers }>(input: T): T => (trace ? { ...input, headers: { ...input.headers, ...trace } } : input);
  return {
    inbound: [
      {
        execute(input, next) {
          const header = input.headers[TRACE_HEADER];
          if (header && workflowInfo().workflowType === deliverEvent.name) trace = { [TRACE_HEADER]: header };
          return next(input);
        },
      },
    ],
    outbound: [{ scheduleActivity: (input, next) => next(withTrace(input)), scheduleLocalActivity: (input, next) => next(withTrace(input)) }],
  };
};
