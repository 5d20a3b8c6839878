import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { withLogContext } from '../log';

/** A caller's id is kept only when it is a plain token: it is echoed and logged. */
const ACCEPTED = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Every request gets an id: the caller's `X-Request-Id` when it is a plain token,
 * a new UUID otherwise. It is echoed in the response and added to every log line
 * written while the request is handled.
 */
export const requestId: RequestHandler = (req, res, next) => {
  const given = req.get('x-request-id');
  const id = given && ACCEPTED.test(given) ? given : randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  withLogContext({ request_id: id }, next);
};

/**
 * The body parser calls on from the socket's stream events, outside the request's
 * log context: this re-enters it for the handlers that follow.
 */
export const keepRequestId: RequestHandler = (_req, res, next) => {
  withLogContext({ request_id: requestIdOf(res) }, next);
};

export const requestIdOf = (res: Response): string | undefined => res.locals.requestId;
