import type { Resource } from '@opentelemetry/resources';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { tracingStarted } from '../telemetry/sdk';

/**
 * A worker's part of a trace, with Temporal's own OpenTelemetry interceptors: each
 * activity runs in a span that continues the trace its workflow scheduled it in (the
 * POSTs inside it are its children: src/outbound/http-client.ts), and the spans of
 * workflow runs, made in the sandbox by the interceptors the traced bundle carries
 * (bundle.ts), leave through a sink to this process's SDK. None without tracing.
 */
export interface WorkerTracing {
  activity: ActivityInterceptorsFactory[];
  sinks: InjectedSinks<OpenTelemetrySinks>;
}

export async function workerTracing(): Promise<WorkerTracing | undefined> {
  const tracing = tracingStarted();
  if (!tracing) return undefined;
  const otel = await import('@temporalio/interceptors-opentelemetry/lib/worker');
  return {
    activity: [(ctx) => ({ inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx), outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx) })],
    // The workflow's spans end in the same processor (batching, the exporter) as the process's own.
    sinks: { exporter: otel.makeWorkflowExporter(tracing.spanProcessor, tracing.resource as Resource) },
  };
}

/**
 * Where a tracing worker finds its workflow bundle beside a prebuilt one (SHIPHOOK_WORKFLOW_BUNDLE):
 * `x.js` → `x.traced.js`, written by `shiphook bundle-workflows x.traced.js --traced` (bundle.ts).
 */
export const tracedBundlePath = (file: string) => file.replace(/(\.js)?$/, '.traced.js');
