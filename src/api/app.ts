import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, Router } from 'express';
import type { Config } from '../config';
import { type Db, isDatabaseUnavailable } from '../db/database';
import { ApiError } from '../errors/api-error';
import { readiness, readinessAnswer } from '../health';
import { log } from '../log';
import { httpMetrics, routeTemplate } from './http-metrics';
import { METRICS_CONTENT_TYPE, metricsText, startProcessMetrics } from '../metrics/exposition';
import { requireAdmin } from './admin-auth';
import { authenticate, principal } from './auth';
import { keepRequestId, requestId, requestIdOf } from './request-id';
import { requestLog } from './request-log';
import { requestSpans } from './request-spans';
import { tracingStarted } from '../telemetry/sdk';
import { CALLER_BASE, CALLER_OPERATIONS, type CallerContext, OPERATOR_BASE, OPERATOR_OPERATIONS, type OperatorContext } from './operations';
import type { PrincipalCache } from './principal-cache';
import { callerOperationRunner, operatorOperationRunner } from './operation-runner';
import { countRequests, createRateLimits, type RateLimits } from './rate-limit';
import { referenceRoutes } from './reference';
import { operationRouter } from './router';
import { portalRouter } from '../portal/router';
import type { TemporalClientSource } from '../engine/client';
import { errorText } from '../errors/error-text';

export interface AppDeps {
  config: Config;
  db: Db;
  temporal: TemporalClientSource;
  /** Authentication without a query per request (see principal-cache.ts). */
  principals: PrincipalCache;
  /** Counted in PostgreSQL; built from the config when not given. */
  rateLimits?: RateLimits;
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  startProcessMetrics();
  if (tracingStarted()) app.use(requestSpans);
  app.use(requestId, httpMetrics, requestLog, collapseSlashes);
  // Not strict: a well-formed body of the wrong shape ("x", 5, null) reaches the schema and gets a 422.
  app.use(express.json({ limit: '1mb', strict: false, type: ['application/json', 'application/*+json'] }), keepRequestId);
  app.use(referenceRoutes());

  // Two doors to the same declared operations, each run with its guards by one runner:
  // the API (an API key) and the portal (a session opened with an API key).
  const limits = deps.rateLimits ?? createRateLimits(deps.config);
  const runCallerOperation = callerOperationRunner({ db: deps.db, limits, principals: deps.principals });
  const context = (req: Request): OperatorContext => ({ db: deps.db, config: deps.config, temporal: deps.temporal, origin: `${req.protocol}://${req.get('host')}` });
  const callerContext = (req: Request, who: CallerContext['who']): CallerContext => ({ ...context(req), who });

  const v2 = Router();
  v2.use(authenticate(deps.db, deps.principals), countRequests(limits, principal));
  v2.use(operationRouter(CALLER_OPERATIONS, (req) => callerContext(req, principal(req)), runCallerOperation));
  app.use(CALLER_BASE, v2);

  const admin = Router();
  admin.use(requireAdmin(deps.config.adminToken));
  admin.use(operationRouter(OPERATOR_OPERATIONS, context, operatorOperationRunner(deps.db)));
  app.use(OPERATOR_BASE, admin);

  // The customer webhook portal (server-rendered pages; see src/portal/router.ts).
  app.use('/portal', portalRouter({ db: deps.db, config: deps.config, limits, run: runCallerOperation, contextOf: callerContext }));

  app.get('/healthz', (_req, res) => { res.json({ ok: true }); });
  app.get('/readyz', async (_req, res) => {
    const answer = readinessAnswer(await readiness(deps));
    res.status(answer.status).json(answer.body);
  });
  // Prometheus text, for the operator only (the same token as /admin/v1).
  app.get('/metrics', requireAdmin(deps.config.adminToken), async (_req, res) => {
    res.type(METRICS_CONTENT_TYPE).send(await metricsText());
  });
  app.use((req) => {
    throw new ApiError('NOT_FOUND', `No route for ${req.method} ${req.path}.`, [`${req.method} ${req.path} is not a route of this API`]);
  });
  app.use(errorBody);
  return app;
}

/** The node client builds `baseUrl + path` with a base ending in `/v2/`: tolerate `//`. */
const collapseSlashes: RequestHandler = (req, _res, next) => {
  const q = req.url.indexOf('?');
  const path = q === -1 ? req.url : req.url.slice(0, q);
  if (path.includes('//')) req.url = path.replace(/\/{2,}/g, '/') + (q === -1 ? '' : req.url.slice(q));
  next();
};

/** Every non-2XX answer is the API's JSON error body (the API specification, 7); no stack or SQL reaches clients. */
const errorBody: ErrorRequestHandler = (err, req, res, _next) => {
  let error: ApiError;
  if (err instanceof ApiError) error = err;
  else if (err?.type === 'entity.parse.failed') error = new ApiError('BAD_REQUEST', 'The request body is not valid JSON.');
  else if (err?.type === 'entity.too.large') error = new ApiError('BAD_REQUEST', 'The request body is too large (limit 1 MB).');
  else if (typeof err?.status === 'number' && err.status >= 400 && err.status < 500) {
    error = new ApiError('BAD_REQUEST', 'The request could not be read.');
  } else if (isDatabaseUnavailable(err)) {
    // PostgreSQL restarting or unreachable: a bounded wait (database.ts), then "retry", never a 500.
    log.warn('database unavailable', { request_id: requestIdOf(res), method: req.method, route: routeTemplate(req, res), error: errorText(err) });
    error = new ApiError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly.');
  } else {
    log.error('unhandled error', { request_id: requestIdOf(res), method: req.method, route: routeTemplate(req, res), error: errorText(err, 500) });
    error = new ApiError('INTERNAL_SERVER_ERROR', 'An internal error occurred; please retry.');
  }
  if (res.headersSent) return;
  res.status(error.status).json(error.toBody());
};
