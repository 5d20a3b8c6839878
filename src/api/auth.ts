import type { NextFunction, Request, Response } from 'express';
import type { Db } from '../db/database';
import { findActiveKey } from '../account/api-keys';
import { keyDigest } from '../account/secrets';
import type { PrincipalCache } from './principal-cache';
import type { Principal } from '../account/principal';
import { ApiError } from '../errors/api-error';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

/**
 * Reads the API key from `Authorization: Basic base64(key:)` (node, Go clients) or
 * `Authorization: Bearer key` (Python, Ruby, Java, C#, PHP). The key is never logged.
 */
export function keyFromAuthorization(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const [scheme, value] = header.trim().split(/\s+/, 2);
  if (!value) return undefined;
  if (/^bearer$/i.test(scheme!)) return value;
  if (/^basic$/i.test(scheme!)) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return (colon === -1 ? decoded : decoded.slice(0, colon)) || undefined;
  }
  return undefined;
}

export function authenticate(db: Db, cache: PrincipalCache) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    const key = keyFromAuthorization(req.headers.authorization);
    const digest = key ? keyDigest(key) : undefined;
    const cacheKey = digest?.toString('hex');
    let found = cacheKey ? cache.get(cacheKey) : undefined;
    if (!found && digest) {
      const since = cache.begin();
      found = await findActiveKey(db, digest);
      if (found) cache.set(cacheKey!, found, since);
    }
    if (!found) {
      throw new ApiError('UNAUTHORIZED', 'The API key is missing, unknown or no longer active. Send it as the Basic auth user name with an empty password.');
    }
    req.principal = found;
    next();
  };
}

/** The caller of an authenticated route. */
export function principal(req: Request): Principal {
  if (!req.principal) throw new ApiError('UNAUTHORIZED');
  return req.principal;
}
