import type { RequestHandler } from 'express';
import { log } from '../log';
import { routeTemplate } from './http-metrics';
import { requestIdOf } from './request-id';

/** What a load balancer, an orchestrator or Prometheus calls every few seconds: counted in /metrics, not logged. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One info line per answered request: method, route template (never the path: it
 * holds ids, and a portal link's token), status, duration, request id, and the
 * caller's user and mode once authenticated (by key or portal session). Never the query, headers or body.
 */
export const requestLog: RequestHandler = (req, res, next) => {
  if (PROBES.has(req.path)) return next();
  const started = process.hrtime.bigint();
  // 'close', not 'finish': a request the client gave up on is logged too (`aborted`).
  res.once('close', () => {
    const who = req.principal ?? req.portal?.who;
    log.info('request', {
      request_id: requestIdOf(res),
      method: req.method,
      route: routeTemplate(req, res),
      status: res.statusCode,
      duration_ms: Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10,
      ...(who ? { user_id: who.user.id, mode: who.mode } : {}),
      ...(res.writableFinished ? {} : { aborted: true }),
    });
  });
  next();
};
