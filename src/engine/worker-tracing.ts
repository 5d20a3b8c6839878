import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { tracingStarted } from '../telemetry/sdk';

/**
 * A worker's part of a trace, with Temporal's OpenTelemetry activity interceptors: each
 * activity runs in a span that continues the trace its workflow's start carried (handed
 * on by the traced bundle's workflows/trace-context.ts), and the POSTs inside it are its
 * children (src/outbound/http-client.ts). None without tracing.
 */
export async function activityTracing(): Promise<ActivityInterceptorsFactory[] | undefined> {
  if (!tracingStarted()) return undefined;
  const otel = await import('@temporalio/interceptors-opentelemetry/lib/worker');
  return [(ctx) => ({ inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx), outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx) })];
}

/**
 * Where a tracing worker finds its workflow bundle beside a prebuilt one (SHIPHOOK_WORKFLOW_BUNDLE):
 * `x.js` → `x.traced.js`, written by `shiphook bundle-workflows x.traced.js --traced` (bundle.ts).
 */
export const tracedBundlePath = (file: string) => file.replace(/(\.js)?$/, '.traced.js');
