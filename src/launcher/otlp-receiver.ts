import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * A local OTLP/HTTP receiver, for the tests and the bench (never production): it takes
 * what OpenTelemetry's exporters send to `url` (POST /v1/traces, /v1/metrics, /v1/logs)
 * and answers success. OTLP/JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) is read into
 * spans; any body can be appended to `dumpTo` as it arrived, one request a line, for the
 * suite's leak scan. `keep: false` (the bench): nothing is kept but counts.
 */
export interface OtlpReceiver {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** The spans received so far (OTLP/JSON only). */
  spans(): ReceivedSpan[];
  /** Export requests, their bytes and the spans received (spans: OTLP/JSON only). */
  counts(): { requests: number; bytes: number; spans: number };
  close(): Promise<void>;
}

/** One span as received, its attributes flattened to plain values. */
export interface ReceivedSpan {
  service: string;
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  startNs: bigint;
  endNs: bigint;
  status: { code?: number; message?: string };
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
}

export async function startOtlpReceiver(opts: { dumpTo?: string; keep?: boolean } = {}): Promise<OtlpReceiver> {
  const keep = opts.keep ?? true;
  const spans: ReceivedSpan[] = [];
  let requests = 0;
  let bytes = 0;
  let counted = 0;
  const server = createServer(async (req, res) => {
    const body = await bodyOf(req);
    requests++;
    bytes += body.length;
    if (opts.dumpTo) appendFileSync(opts.dumpTo, `${body.toString('utf8').replace(/\n/g, ' ')}\n`);
    const json = (req.headers['content-type'] ?? '').includes('json');
    if (json && req.url === '/v1/traces') {
      const received = spansOf(JSON.parse(body.toString('utf8')));
      counted += received.length;
      if (keep) spans.push(...received);
    }
    // An empty ExportTraceServiceResponse: full success.
    res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => [...spans],
    counts: () => ({ requests, bytes, spans: counted }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: AnyValue[] }; kvlistValue?: { values?: KeyValue[] } };
type KeyValue = { key: string; value?: AnyValue };

function valueOf(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  if (v.kvlistValue) return attributesOf(v.kvlistValue.values);
  return undefined;
}

const attributesOf = (kvs: KeyValue[] | undefined): Record<string, unknown> => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, valueOf(kv.value)]));

/** The spans of an OTLP/JSON ExportTraceServiceRequest (ids in hex, as the JSON encoding has them). */
function spansOf(request: { resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: Record<string, any>[] }[] }[] }): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((rs) => {
    const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        service,
        name: s.name,
        kind: s.kind,
        traceId: s.traceId,
        spanId: s.spanId,
        ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
        startNs: BigInt(s.startTimeUnixNano),
        endNs: BigInt(s.endTimeUnixNano),
        status: s.status ?? {},
        attributes: attributesOf(s.attributes),
        links: (s.links ?? []).map((l: Record<string, any>) => ({ traceId: l.traceId, spanId: l.spanId, attributes: attributesOf(l.attributes) })),
      })),
    );
  });
}
