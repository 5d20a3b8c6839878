/**
 * How the outbox tells a start Temporal refused for good (a dispatch incident, not
 * tried again until an operator replays the event) from one worth trying again.
 */

/**
 * gRPC codes with which Temporal refuses a start for a reason that retrying the same
 * start cannot fix: INVALID_ARGUMENT (3: a size limit, a malformed value),
 * FAILED_PRECONDITION (9), OUT_OF_RANGE (11). Anything else (unreachable, deadline,
 * overloaded, unauthenticated) is transient: the event is tried again.
 */
const PERMANENT_GRPC_CODES = new Set([3, 9, 11]);

export function isPermanentStartFailure(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'number' && PERMANENT_GRPC_CODES.has(e.code)) return true;
  }
  return false;
}
