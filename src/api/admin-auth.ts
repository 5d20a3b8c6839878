import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/api-error';

/**
 * The operator API (`/admin/v1`) is authenticated by `Authorization: Bearer
 * $SHIPHOOK_ADMIN_TOKEN`. With no token configured it does not exist (404).
 */
export function requireAdmin(token: string | undefined) {
  const expected = token ? digest(token) : undefined;
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (!expected) throw new ApiError('NOT_FOUND', 'The operator API is disabled (no SHIPHOOK_ADMIN_TOKEN is configured).');
    const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    // Digests of equal length: the comparison takes the same time whatever was sent, and tells nothing of the token's length.
    if (!timingSafeEqual(digest(match ? match[1]!.trim() : ''), expected)) {
      throw new ApiError('UNAUTHORIZED', 'The operator API needs Authorization: Bearer <SHIPHOOK_ADMIN_TOKEN>.');
    }
    next();
  };
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
