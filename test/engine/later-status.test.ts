import { describe, expect, it } from 'vitest';
import { laterStatus } from '../../workflows/deliver-event';

describe('the status a delivery run returns', () => {
  it('follows each report while the event is not final', () => {
    expect(laterStatus(undefined, 'in_queue')).toBe('in_queue');
    expect(laterStatus('in_queue', 'retrying')).toBe('retrying');
    expect(laterStatus('retrying', 'completed')).toBe('completed');
    expect(laterStatus('retrying', 'failed')).toBe('failed');
  });

  it('keeps a final status against a report from an earlier update that arrives after it', () => {
    // Two URLs retried in parallel: B's retry was recorded first (A still pending: retrying),
    // A's second (completed), but B's activity reached the workflow last.
    expect(laterStatus('completed', 'retrying')).toBe('completed');
    expect(laterStatus('failed', 'retrying')).toBe('failed');
    expect(laterStatus('completed', 'in_queue')).toBe('completed');
  });
});
