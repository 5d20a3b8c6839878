import type { Request, RequestHandler } from 'express';
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

/** Where the api mounts its routers (app.ts): a route's path is relative to one of them. */
const MOUNTS = ['/v2', '/admin/v1'];

/**
 * What a request is counted under: the matched route's template; `unmatched` when
 * none matched (unknown path, or refused before routing, e.g. by authentication).
 * Once an error has left a router, Express has restored `baseUrl` to '', so the
 * mount is found from the path.
 */
export function routeTemplate(req: Request): string {
  const path = req.route?.path;
  if (typeof path !== 'string') return 'unmatched';
  const base = req.baseUrl || (MOUNTS.find((m) => req.path.startsWith(m + '/')) ?? '');
  return base + path;
}

export const httpMetrics: RequestHandler = (req, res, next) => {
  const started = process.hrtime.bigint();
  res.once('finish', () => {
    const route = routeTemplate(req);
    requests.inc({ route, method: METHODS.has(req.method) ? req.method : 'other', status: `${Math.floor(res.statusCode / 100)}xx` });
    duration.observe({ route }, Number(process.hrtime.bigint() - started) / 1e9);
  });
  next();
};
