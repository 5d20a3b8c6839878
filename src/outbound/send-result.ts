import type { OutboundReason } from './outbound-error';

/** What one outbound attempt gave: the answer, or why there was none. */
export interface SendResult {
  /** 0 when no response arrived (refused address, DNS, timeout, connection or TLS error). */
  status: number;
  headers: Record<string, string>;
  body: string;
  totalTimeMs: number;
  /** Why no response arrived, in words safe to show the account (no addresses). */
  error?: string;
  /** …and as a code (metrics tell a refused address from a network failure). */
  reason?: OutboundReason;
}
