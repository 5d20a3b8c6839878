import type { RequestHandler } from 'express';
import { ApiError } from '../errors/api-error';

/**
 * The API reads JSON bodies only. A body sent with another type (curl's default
 * `application/x-www-form-urlencoded`) or none is left unread by the parser, and
 * would otherwise reach the schema as "no body" ("webhook cannot be blank"): the
 * answer names the header instead.
 */
export const requireJsonBody: RequestHandler = (req, _res, next) => {
  const length = req.headers['content-length'];
  const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (req.body !== undefined || !hasBody) return next();
  const type = req.headers['content-type']?.split(';')[0]?.trim().slice(0, 100);
  throw new ApiError('BAD_REQUEST', 'Send the body as JSON with `Content-Type: application/json`.', [
    type ? `The request's Content-Type is ${type}.` : 'The request has no Content-Type header.',
  ]);
};
