import { describe, expect, it } from 'vitest';
import { hasPrefix, idTime, newId } from '../src/ids';

describe('ids', () => {
  it('are the prefix and 32 lowercase hex digits', () => {
    const id = newId('evt');
    expect(id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(hasPrefix(id, 'evt')).toBe(true);
    expect(hasPrefix(id, 'hook')).toBe(false);
    expect(hasPrefix('evt_XYZ', 'evt')).toBe(false);
  });

  it('sort in creation order, also within one millisecond', () => {
    const ids = Array.from({ length: 5000 }, () => newId('hook'));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('carry their creation time', () => {
    const before = Date.now();
    const t = idTime(newId('user')).getTime();
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(Date.now());
  });
});
