import { diag, type DiagLogger, DiagLogLevel, type TextMapPropagator } from '@opentelemetry/api';
import { log } from '../log';
import { VERSION } from '../version';

/**
 * The OpenTelemetry SDK of an api or worker process, started by its CLI command when
 * the configuration says so (config.tracing) and never otherwise: without it, no
 * span is made anywhere (`tracingStarted()` is false and every helper of this folder
 * runs its code bare) and no interceptor is installed.
 *
 * The official Node SDK reads the standard variables itself: OTEL_EXPORTER_OTLP_ENDPOINT,
 * OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, http/json or grpc), OTEL_EXPORTER_OTLP_HEADERS,
 * OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER and its argument, the
 * batch processor's OTEL_BSP_*. Shiphook adds no auto-instrumentation: the spans are the
 * engine's own (src/telemetry/spans.ts) and Temporal's client and activity interceptors'.
 */
export interface Tracing {
  /** W3C Trace Context, the form a trace's context is stored in (stored-context.ts), whatever OTEL_PROPAGATORS says. */
  w3c: TextMapPropagator;
  /** Sends what is still buffered; at exit. */
  shutdown(): Promise<void>;
}

let started: Tracing | undefined;

/** The running SDK of this process, if any. */
export const tracingStarted = (): Tracing | undefined => started;

/**
 * Starts the SDK (once per process) as service `serviceName` unless OTEL_SERVICE_NAME
 * names it. Loaded here, on demand: a process without tracing never loads the SDK.
 */
export async function startTracing(serviceName: string): Promise<Tracing> {
  if (started) return started;
  // The SDK's own complaints (an exporter that cannot reach its endpoint) as shiphook log lines.
  diag.setLogger(diagToLog, DiagLogLevel.WARN);
  // The SDK's default, said here so that it does not warn at every start that it chose it.
  process.env.OTEL_TRACES_EXPORTER ||= 'otlp';
  const { NodeSDK, core, resources } = await import('@opentelemetry/sdk-node');
  const sdk = new NodeSDK({
    ...(process.env.OTEL_SERVICE_NAME ? {} : { serviceName }),
    resource: new resources.Resource({ 'service.version': VERSION }),
    // Traces only: shiphook's logs are JSON lines, its metrics Prometheus'.
    logRecordProcessors: [],
  });
  sdk.start();
  started = {
    w3c: new core.W3CTraceContextPropagator(),
    shutdown: () => sdk.shutdown().catch((err: unknown) => log.warn('could not send the last spans', { error: String(err) })),
  };
  log.info('exporting traces', { service: process.env.OTEL_SERVICE_NAME || serviceName, protocol: process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || process.env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf' });
  return started;
}

/** One line per complaint, cut short (an export error comes with its whole stack as JSON). */
const complain = (message: string, ...args: unknown[]) =>
  log.warn('the OpenTelemetry SDK reports a problem (spans may be lost)', { source: 'opentelemetry', detail: [message, ...args.map(String)].join(' ').slice(0, 300) });

const diagToLog: DiagLogger = { error: complain, warn: complain, info: () => undefined, debug: () => undefined, verbose: () => undefined };
