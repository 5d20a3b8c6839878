import { rootCertificates } from 'node:tls';
import { type Attributes, type Span, SpanKind } from '@opentelemetry/api';
import { Agent, buildConnector, request } from 'undici';
import { failed, inSpan } from '../telemetry/spans';
import { type AddressPolicy, type Lookup, resolveAllowed, systemLookup } from './address-guard';
import { isListenerUrl, type ListenerTransport } from './listener-transport';
import { OutboundError, reasonOf, reasonText } from './outbound-error';
import type { SendResult } from './send-result';

/**
 * The only way a request leaves for a customer's endpoint. The host is resolved
 * once, inside the connection itself (the Agent's `connect`): every address is
 * checked and the socket connects to the checked address, so a name cannot answer
 * a public address to a check and an internal one to the connection (DNS
 * rebinding). TLS keeps the host name for SNI and the certificate check, and
 * requires TLS 1.2 or later. One keep-alive pool per client; redirects are never
 * followed (a 3xx is a failed attempt); at most 64 KiB of an answer is read.
 */
export const MAX_RESPONSE_READ = 64 * 1024;
/** A resolver that does not answer within this (or the attempt's bound) fails the attempt. */
const MAX_DNS_MS = 5000;

export type { SendResult };

export interface HttpClientOptions extends AddressPolicy {
  /** Permit `http://` targets (SHIPHOOK_WEBHOOK_ALLOW_HTTP; dev and tests). */
  allowHttp: boolean;
  /** Connect + total time of one request. */
  timeoutMs: number;
  /** Extra trusted CA certificates (PEM), besides Node's bundled roots. */
  extraCa?: string;
  /** Injected by tests; the system resolver otherwise. */
  lookup?: Lookup;
  /** Where `listen://` URLs go (listener-transport.ts); without it they are refused. */
  listeners?: ListenerTransport;
}

export type HttpClient = ReturnType<typeof createHttpClient>;

/**
 * How a POST shows in a trace: its URL as an operator may see it (masked by the caller,
 * which knows the URL's rules), and what the caller knows of it (the event, the attempt).
 * Headers and bodies never go into a span.
 */
export interface PostTrace {
  url: string;
  attributes: Attributes;
}

export function createHttpClient(options: HttpClientOptions) {
  const lookup = options.lookup ?? systemLookup;
  const dnsTimeoutMs = Math.min(MAX_DNS_MS, options.timeoutMs);
  const tlsConnect = buildConnector({
    timeout: options.timeoutMs,
    minVersion: 'TLSv1.2',
    ...(options.extraCa ? { ca: [...rootCertificates, options.extraCa] } : {}),
  });
  const pinnedConnect: buildConnector.connector = (opts, callback) => {
    resolveAllowed(opts.hostname, options, lookup, dnsTimeoutMs).then(
      ([address]) => {
        const named = address !== opts.hostname.replace(/^\[|\]$/g, '');
        tlsConnect({ ...opts, hostname: address!, ...(named && opts.protocol === 'https:' ? { servername: opts.hostname } : {}) }, callback);
      },
      (err: Error) => callback(err, null),
    );
  };
  const agent = new Agent({ connect: pinnedConnect, keepAliveTimeout: 30_000, connections: 64, pipelining: 1 });

  const wire = {
    /** The POST itself, timed and bounded; every failure is a result (status 0), never an exception. */
    async post(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      // A listener's URL never reaches a connection: its transport queues the request for the CLI.
      if (isListenerUrl(url)) {
        return options.listeners ? options.listeners.post(url, headers, body, options.timeoutMs) : { status: 0, headers: {}, body: '', totalTimeMs: 0, error: reasonText('FAILED'), reason: 'FAILED' };
      }
      try {
        if (!options.allowHttp && !url.startsWith('https:')) throw new OutboundError('HTTP_REFUSED');
        const res = await request(url, {
          method: 'POST',
          headers,
          body,
          dispatcher: agent,
          signal: AbortSignal.timeout(options.timeoutMs),
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
        });
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res.body) {
          const buf = chunk as Buffer;
          chunks.push(buf);
          size += buf.length;
          if (size >= MAX_RESPONSE_READ) {
            res.body.destroy();
            break;
          }
        }
        return {
          status: res.statusCode,
          headers: flattenHeaders(res.headers),
          body: Buffer.concat(chunks).subarray(0, MAX_RESPONSE_READ).toString('utf8'),
          totalTimeMs: elapsed(),
        };
      } catch (err) {
        const reason = reasonOf(err);
        const error = reason === 'TIMEOUT' ? `timed out after ${options.timeoutMs} ms` : reasonText(reason);
        return { status: 0, headers: {}, body: '', totalTimeMs: elapsed(), error, reason };
      }
    },
  };

  return {
    /** A POST to `url`; with tracing, in a client span described by `traced` (called only then). */
    post(url: string, headers: Record<string, string>, body: string, traced?: () => PostTrace): Promise<SendResult> {
      const described = () => {
        const t = traced?.();
        return { kind: SpanKind.CLIENT, attributes: { 'http.request.method': 'POST', ...(t ? { 'url.full': t.url, ...t.attributes } : {}) } };
      };
      return inSpan('POST webhook', described, async (span) => {
        const result = await wire.post(url, headers, body);
        if (span) describeAnswer(span, result);
        return result;
      });
    },
    close: () => agent.close(),
  };
}

/** What came back, on the POST's span: a status that is not 2XX, or no answer, is a failed attempt. */
function describeAnswer(span: Span, result: SendResult): void {
  span.setAttributes({ 'shiphook.total_time_ms': result.totalTimeMs, ...(result.status ? { 'http.response.status_code': result.status } : { 'error.type': result.reason ?? 'NO_RESPONSE' }) });
  if (result.status < 200 || result.status > 299) failed(span, result.error ?? `HTTP ${result.status}`);
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}
