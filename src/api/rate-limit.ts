import type { Request, RequestHandler } from 'express';
import { createPgPool } from '../db/database';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config';
import { ApiError } from '../errors/api-error';
import type { RateBucket } from '../operation';
import type { Principal } from '../account/principal';
import type { HeaderSink } from './answer';

/**
 * Rate limits of `/v2`, counted in PostgreSQL (`rate-limiter-flexible`), so they
 * hold across api processes and replicas. Every request counts once against its
 * API key and once against its account (the key's user and mode): several keys do
 * not multiply an account's budget. Costlier requests — replays (outbound
 * traffic), purchases, child accounts, password checks (scrypt, 128 MiB each) —
 * also count against a tighter per-account bucket per minute.
 *
 * Cost: one upsert per counter, the key's and then the account's. A caller
 * over its limit is then refused from memory for the rest of the window
 * (`inMemoryBlockOnConsumed`), so a flood costs the database nothing more; if the
 * database cannot count, an in-memory limiter (the limit shared out over the
 * processes) stands in rather than failing the request.
 */

export interface RateLimits {
  /** Counts a request of `who` against its key and account; throws 429 over the limit. The headers tell where it stands. */
  general(who: Principal, setHeader: HeaderSink): Promise<void>;
  /** Counts an operation's call against the account's tighter bucket (password checks: only a body that carries a password). */
  bucket(name: RateBucket, who: Principal, body: unknown, setHeader: HeaderSink): Promise<void>;
  close(): Promise<void>;
}

const TABLE = 'rate_limit_counters';

/** `windowSeconds` is for tests, which need windows longer than a busy machine's burst. */
export function createRateLimits(config: Config, opts: { windowSeconds?: number } = {}): RateLimits {
  const limits = config.rateLimit;
  if (limits.perSecond === 0 || !config.databaseUrl) return { general: pass, bucket: pass, close: pass };
  const pool = createPgPool(config.databaseUrl, 4, { allowExitOnIdle: true });
  const window = opts.windowSeconds ?? 1;
  const limiter = (keyPrefix: string, points: number, duration: number) =>
    new RateLimiterPostgres({
      storeClient: pool,
      storeType: 'pool',
      tableName: TABLE,
      tableCreated: true, // by a migration
      // They share the table: one of them deletes expired rows (every 5 minutes).
      clearExpiredByTimeout: keyPrefix === 'key',
      keyPrefix,
      points,
      duration,
      inMemoryBlockOnConsumed: points,
      inMemoryBlockDuration: duration,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix, points: Math.max(1, Math.floor(points / config.apiProcesses)), duration }),
    });
  // Stripe: 100 requests/s live, 25/s test.
  const testPoints = Math.max(1, Math.round(limits.perSecond / 4));
  const perKey = { production: limiter('key', limits.perSecond, window), test: limiter('key-test', testPoints, window) };
  const perAccount = { production: limiter('account', limits.perSecond, window), test: limiter('account-test', testPoints, window) };
  const perMinute = (name: string, points: number) => (points === 0 ? undefined : limiter(name, points, opts.windowSeconds ? opts.windowSeconds * 60 : 60));
  const buckets: Record<RateBucket, RateLimiterPostgres | undefined> = {
    replays: perMinute('replays', limits.replaysPerMinute),
    purchases: perMinute('purchases', limits.purchasesPerMinute),
    children: perMinute('children', limits.childrenPerMinute),
    passwordChecks: perMinute('password-checks', limits.passwordChecksPerMinute),
  };

  return {
    async general(who, setHeader) {
      // One after the other: a request the key's counter refuses does not count
      // against the account. Counted in parallel, concurrent requests could take the
      // two counters in different orders, and fewer than the limit would pass both.
      const key = await consume(perKey[who.mode], who.keyId);
      if (!key.ok) {
        headers(setHeader, key.limiter.points, key.res);
        refuse(setHeader, key.res);
      }
      const account = await consume(perAccount[who.mode], who.user.id);
      // The headers tell of the tighter of the two.
      const binding = account.res.remainingPoints < key.res.remainingPoints ? account : key;
      headers(setHeader, binding.limiter.points, binding.res);
      if (!account.ok) refuse(setHeader, binding.res);
    },
    async bucket(name, who, body, setHeader) {
      const bucketLimiter = buckets[name];
      if (!bucketLimiter || (name === 'passwordChecks' && !isPasswordCheck(body))) return;
      const { ok, res: r } = await consume(bucketLimiter, who.user.id);
      if (!ok) {
        headers(setHeader, bucketLimiter.points, r);
        refuse(setHeader, r);
      }
    },
    close: () => pool.end(),
  };
}

const pass = async () => undefined;

/** A door's requests (the API's, the portal's) counted against the general limit of their caller, as `whoOf` finds it. */
export function countRequests(limits: RateLimits, whoOf: (req: Request) => Principal): RequestHandler {
  return async (req, res, next) => {
    await limits.general(whoOf(req), (name, value) => res.setHeader(name, value));
    next();
  };
}

async function consume(limiter: RateLimiterPostgres, key: string): Promise<{ ok: boolean; res: RateLimiterRes; limiter: RateLimiterPostgres }> {
  try {
    return { ok: true, res: await limiter.consume(key), limiter };
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return { ok: false, res: rejection, limiter };
    throw rejection;
  }
}

function headers(setHeader: HeaderSink, limit: number, r: RateLimiterRes): void {
  setHeader('X-RateLimit-Limit', String(limit));
  setHeader('X-RateLimit-Remaining', String(Math.max(0, r.remainingPoints)));
  // When the window ends, in Unix seconds (as GitHub sends it).
  setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)));
}

function refuse(setHeader: HeaderSink, r: RateLimiterRes): never {
  setHeader('Retry-After', String(Math.max(1, Math.ceil(r.msBeforeNext / 1000))));
  throw new ApiError('RATE_LIMITED', 'Too many requests; retry after the number of seconds in Retry-After.');
}

/** A user's update carrying a password or current_password: a scrypt check or hash. */
function isPasswordCheck(body: unknown): boolean {
  const user = (body as { user?: Record<string, unknown> } | undefined)?.user;
  return !!user && typeof user === 'object' && ('password' in user || 'current_password' in user);
}
