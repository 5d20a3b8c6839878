import type { Request, RequestHandler, Response } from 'express';
import { createPgPool } from '../db/database';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config';
import { ApiError } from '../errors/api-error';
import type { RateBucket } from '../operation';

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
  /** Counts the request against its key and account; 429 over the limit. */
  general: RequestHandler;
  /** Counts the request against the account's tighter bucket (password checks: only a body that carries a password). */
  bucket(name: RateBucket): RequestHandler;
  close(): Promise<void>;
}

const TABLE = 'rate_limit_counters';

/** `windowSeconds` is for tests, which need windows longer than a busy machine's burst. */
export function createRateLimits(config: Config, opts: { windowSeconds?: number } = {}): RateLimits {
  const limits = config.rateLimit;
  if (limits.perSecond === 0 || !config.databaseUrl) return { general: pass, bucket: () => pass, close: async () => undefined };
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
    general: async (req, res, next) => {
      const who = req.principal!;
      // One after the other: a request the key's counter refuses does not count
      // against the account. Counted in parallel, concurrent requests could take the
      // two counters in different orders, and fewer than the limit would pass both.
      const key = await consume(perKey[who.mode], who.keyId);
      if (!key.ok) {
        headers(res, key.limiter.points, key.res);
        refuse(res, key.res);
      }
      const account = await consume(perAccount[who.mode], who.user.id);
      // The headers tell of the tighter of the two.
      const binding = account.res.remainingPoints < key.res.remainingPoints ? account : key;
      headers(res, binding.limiter.points, binding.res);
      if (!account.ok) refuse(res, binding.res);
      next();
    },
    bucket(name) {
      const bucketLimiter = buckets[name];
      if (!bucketLimiter) return pass;
      return async (req, res, next) => {
        if (name === 'passwordChecks' && !isPasswordCheck(req)) return next();
        const { ok, res: r } = await consume(bucketLimiter, req.principal!.user.id);
        if (!ok) {
          headers(res, bucketLimiter.points, r);
          refuse(res, r);
        }
        next();
      };
    },
    close: () => pool.end(),
  };
}

const pass: RequestHandler = (_req, _res, next) => next();

async function consume(limiter: RateLimiterPostgres, key: string): Promise<{ ok: boolean; res: RateLimiterRes; limiter: RateLimiterPostgres }> {
  try {
    return { ok: true, res: await limiter.consume(key), limiter };
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return { ok: false, res: rejection, limiter };
    throw rejection;
  }
}

function headers(res: Response, limit: number, r: RateLimiterRes): void {
  res.setHeader('X-RateLimit-Limit', String(limit));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, r.remainingPoints)));
  // When the window ends, in Unix seconds (as GitHub sends it).
  res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)));
}

function refuse(res: Response, r: RateLimiterRes): never {
  res.setHeader('Retry-After', String(Math.max(1, Math.ceil(r.msBeforeNext / 1000))));
  throw new ApiError('RATE_LIMITED', 'Too many requests; retry after the number of seconds in Retry-After.');
}

/** A user's update carrying a password or current_password: a scrypt check or hash. */
function isPasswordCheck(req: Request): boolean {
  const user = (req.body as { user?: Record<string, unknown> } | undefined)?.user;
  return !!user && typeof user === 'object' && ('password' in user || 'current_password' in user);
}
