import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { Counter, Histogram } from 'prom-client';

/**
 * HTTP metrics of the api, labelled by route template (`/v2/webhooks/:id`), never
 * by the path itself: ids, keys and query strings would make the label set unbounded.
 */
const requests = new Counter({
  name: 'shiphook_http_requests_total',
  help: 'API requests answered, by route template, method and status class.',
  labelNames: ['route', 'method', 'status'] as const,
});

const duration = new Histogram({
  name: 'shiphook_http_request_duration_seconds',
  help: 'Time from receiving an API request to finishing its answer, by route template.',
  labelNames: ['route'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
});

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/**
 * What a request is counted (and logged) under: its mount and matched route's
 * template (`/v2/webhooks/:id`), or what `noteRoute` kept; `unmatched` when no
 * route matched (an unknown path, or refused before routing, e.g. by authentication).
 */
export function routeTemplate(req: Request, res: Response): string {
  const kept: unknown = res.locals.route;
  if (typeof kept === 'string') return kept;
  const path = req.route?.path;
  return typeof path === 'string' ? req.baseUrl + path : 'unmatched';
}

/**
 * Once an error has left a mounted router, Express has restored `baseUrl` to '' and
 * the template would lose its mount: the last layer of a mounted router
 * (`router.use(noteRoute)`; it sees only that router's errors) keeps the template
 * while the mount is still known.
 */
export const noteRoute: ErrorRequestHandler = (err, req, res, next) => {
  res.locals.route ??= routeTemplate(req, res);
  next(err);
};

/** For what is served without a route (a static folder): the template to count it under. */
export const servedAs = (template: string): RequestHandler => (_req, res, next) => {
  res.locals.route = template;
  next();
};

export const httpMetrics: RequestHandler = (req, res, next) => {
  const started = process.hrtime.bigint();
  res.once('finish', () => {
    const route = routeTemplate(req, res);
    requests.inc({ route, method: METHODS.has(req.method) ? req.method : 'other', status: `${Math.floor(res.statusCode / 100)}xx` });
    duration.observe({ route }, Number(process.hrtime.bigint() - started) / 1e9);
  });
  next();
};
