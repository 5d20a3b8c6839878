import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { catalogue } from '../../src/errors/catalogue';
import { ApiError } from '../../src/errors/api-error';

const SEED = new URL('../../../shared/seed/000_0912da31d0cf6f0d.txt', import.meta.url);
const FIXTURE = new URL('../fixtures/seed-error-codes.txt', import.meta.url);

function seedCodes(text: string): string[] {
  const section = text.split('## 7. Errors')[1]!.split('## 8. Limits')[0]!;
  return [...section.matchAll(/^\| ([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*) \|/gm)].map((m) => m[1]!).filter((c) => !c.startsWith('E.'));
}

const fixtureCodes = readFileSync(FIXTURE, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));

describe('error catalogue', () => {
  it('holds every code of seed section 7 (address detail codes E.* are not error codes)', () => {
    expect(fixtureCodes.length).toBeGreaterThan(150);
    expect(fixtureCodes.filter((c) => !(c in catalogue))).toEqual([]);
  });

  // The fixture is the seed's list; where the seed sits beside the repo (CI, sessions), prove it.
  it.runIf(existsSync(SEED))('matches the seed it was taken from', () => {
    expect(seedCodes(readFileSync(SEED, 'utf8'))).toEqual(fixtureCodes);
  });

  it('gives every code a status the seed lists and a non-empty message', () => {
    const statuses = new Set([400, 401, 402, 403, 404, 405, 422, 429, 500, 503]);
    for (const [code, entry] of Object.entries(catalogue)) {
      expect(statuses.has(entry.status), code).toBe(true);
      expect(entry.message.length, code).toBeGreaterThan(0);
    }
  });

  it('maps the general codes as documented', () => {
    expect(new ApiError('UNAUTHORIZED').status).toBe(401);
    expect(new ApiError('MODE.UNAUTHORIZED').status).toBe(403);
    expect(new ApiError('MODE.CONFLICT').status).toBe(403);
    expect(new ApiError('PAYMENT_REQUIRED').status).toBe(402);
    expect(new ApiError('NOT_FOUND').status).toBe(404);
    expect(new ApiError('DATE.PARSE.FAILURE').status).toBe(422);
    expect(new ApiError('INTERNAL_SERVER_ERROR').status).toBe(500);
    expect(new ApiError('SHIPMENT.POSTAGE.EXISTS').toBody()).toEqual({
      error: { code: 'SHIPMENT.POSTAGE.EXISTS', message: 'Postage already purchased.', errors: [] },
    });
  });
});
