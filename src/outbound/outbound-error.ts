/**
 * Why an outbound request failed, in words safe to store in a Payload the account
 * reads: never an address, a port or a resolver's or TLS library's own message,
 * which could map the network the worker sits in.
 */
const REASONS = {
  HTTP_REFUSED: 'webhook URL must use https',
  ADDRESS_REFUSED: 'the host resolves to an address webhooks may not reach (not public)',
  DNS_NOT_FOUND: 'the host name does not resolve',
  DNS_FAILED: 'the host name could not be resolved',
  DNS_TIMEOUT: 'the host name did not resolve in time',
  TIMEOUT: 'timed out',
  CONNECTION_REFUSED: 'connection refused',
  CONNECTION_RESET: 'connection reset by the endpoint',
  CONNECTION_CLOSED: 'the endpoint closed the connection',
  UNREACHABLE: 'the endpoint is unreachable',
  TLS_EXPIRED: 'TLS: the certificate has expired or is not yet valid',
  TLS_HOSTNAME: 'TLS: the certificate does not match the host name',
  TLS_UNTRUSTED: 'TLS: the certificate is not signed by a trusted authority',
  TLS_PROTOCOL: 'TLS: the endpoint offers no TLS 1.2 or later',
  TLS_FAILED: 'TLS: the handshake failed',
  FAILED: 'the request failed',
  // A listener's attempts (listener-transport.ts).
  LISTENER_TIMEOUT: 'the listener did not answer in time (is `shiphook listen` still connected?)',
  LISTENER_GONE: 'the listener was removed (its `shiphook listen` stopped)',
} as const;

export type OutboundReason = keyof typeof REASONS;

export class OutboundError extends Error {
  constructor(readonly reason: OutboundReason) {
    super(REASONS[reason]);
    this.name = 'OutboundError';
  }
}

const BY_CODE: Record<string, OutboundReason> = {
  ECONNREFUSED: 'CONNECTION_REFUSED',
  ECONNRESET: 'CONNECTION_RESET',
  EPIPE: 'CONNECTION_CLOSED',
  UND_ERR_SOCKET: 'CONNECTION_CLOSED',
  UND_ERR_CLOSED: 'CONNECTION_CLOSED',
  EHOSTUNREACH: 'UNREACHABLE',
  ENETUNREACH: 'UNREACHABLE',
  EADDRNOTAVAIL: 'UNREACHABLE',
  UND_ERR_CONNECT_TIMEOUT: 'TIMEOUT',
  UND_ERR_HEADERS_TIMEOUT: 'TIMEOUT',
  UND_ERR_BODY_TIMEOUT: 'TIMEOUT',
  ETIMEDOUT: 'TIMEOUT',
  CERT_HAS_EXPIRED: 'TLS_EXPIRED',
  CERT_NOT_YET_VALID: 'TLS_EXPIRED',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS_HOSTNAME',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS_UNTRUSTED',
  UNABLE_TO_GET_ISSUER_CERT: 'TLS_UNTRUSTED',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'TLS_UNTRUSTED',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS_UNTRUSTED',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS_UNTRUSTED',
  CERT_UNTRUSTED: 'TLS_UNTRUSTED',
  CERT_SIGNATURE_FAILURE: 'TLS_UNTRUSTED',
};

/** The reason behind whatever undici, net or tls threw. */
export function reasonOf(err: unknown): OutboundReason {
  for (let e = err as { code?: string; name?: string; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (e instanceof OutboundError) return e.reason;
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'TIMEOUT';
    const code = e.code ?? '';
    if (BY_CODE[code]) return BY_CODE[code]!;
    if (/PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL|WRONG_VERSION|NO_PROTOCOLS/.test(code)) return 'TLS_PROTOCOL';
    if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS')) return 'TLS_FAILED';
  }
  return 'FAILED';
}

export const reasonText = (reason: OutboundReason): string => REASONS[reason];
