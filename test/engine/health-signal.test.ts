import { describe, expect, it } from 'vitest';
import { repeatsHealthSignal } from '../../activities/health';

describe('which failures of a run tell the health workflow', () => {
  it('the first, the threshold, and every doubling of it: a log of the run, not one signal per threshold failures', () => {
    const told = (threshold: number, upTo: number) => Array.from({ length: upTo }, (_, i) => i + 1).filter((n) => repeatsHealthSignal(n, threshold));
    expect(told(20, 1000)).toEqual([1, 20, 40, 80, 160, 320, 640]);
    expect(told(4, 40)).toEqual([1, 4, 8, 16, 32]);
    expect(told(1, 10)).toEqual([1, 2, 4, 8]);
  });
});
