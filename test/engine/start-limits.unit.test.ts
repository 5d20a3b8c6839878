import { describe, expect, it } from 'vitest';
import { isPermanentStartFailure } from '../../src/engine/start-failures';
import { urlsAttribute } from '../../src/engine/urls-attribute';
import { isDatabaseUnavailable } from '../../src/db/database';

describe('what the dispatcher sends Temporal', () => {
  it('the URL search attribute stays under 1,500 bytes however many and long the URLs', () => {
    const targets = Array.from({ length: 100 }, (_, i) => ({ webhookId: `hook_${i}`, url: `https://example.com/${i}/` + 'x'.repeat(2000) }));
    const value = urlsAttribute(targets);
    expect(Buffer.byteLength(JSON.stringify(value))).toBeLessThanOrEqual(1500);
    expect(value.length).toBeGreaterThan(0);
    for (const [i, url] of value.entries()) expect(targets[i]!.url.startsWith(url)).toBe(true);
    const short = [{ webhookId: 'a', url: 'https://a.example/h' }, { webhookId: 'b', url: 'https://a.example/h' }, { webhookId: 'c', url: 'https://b.example/h' }];
    expect(urlsAttribute(short)).toEqual(['https://a.example/h', 'https://b.example/h']);
  });

  it('a start refused as invalid is permanent; unreachable, deadline or overload is not', () => {
    expect(isPermanentStartFailure(Object.assign(new Error('Failed to start Workflow'), { cause: { code: 3, message: 'Blob data size exceeds limit.' } }))).toBe(true);
    expect(isPermanentStartFailure({ code: 9 })).toBe(true);
    for (const code of [4, 8, 13, 14]) expect(isPermanentStartFailure(Object.assign(new Error('x'), { cause: { code } }))).toBe(false);
    expect(isPermanentStartFailure(new Error('Temporal did not answer within 5000 ms'))).toBe(false);
  });

  it('database outages are recognised (and answered 503), other database errors are not', () => {
    for (const e of [{ code: 'ECONNREFUSED' }, { code: '57P01' }, { code: '57P03' }, { code: '08006' }, new Error('timeout exceeded when trying to connect'), new Error('Connection terminated unexpectedly')]) {
      expect(isDatabaseUnavailable(e)).toBe(true);
    }
    for (const e of [{ code: '23505' }, { code: '42P01' }, new Error('boom'), undefined]) expect(isDatabaseUnavailable(e)).toBe(false);
  });
});
