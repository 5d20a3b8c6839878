import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config';
import { ApiError } from '../errors/api-error';
import { readiness, readinessAnswer, type ReadinessDeps } from '../health';
import { log } from '../log';
import { METRICS_CONTENT_TYPE, metricsText } from '../metrics/exposition';
import { errorText } from '../errors/error-text';

const TEMPORAL_SCRAPE_TIMEOUT_MS = 2000;

/**
 * The worker's own small HTTP listener (SHIPHOOK_WORKER_HTTP_HOST:PORT, loopback by
 * default): `/healthz` (the process answers), `/readyz` (PostgreSQL and Temporal
 * answer, migrations current), `/metrics` (shiphook's metrics, then the Temporal
 * SDK's exporter's). No credentials: keep it on a private interface.
 */
export async function startWorkerHttp(config: Config, deps: ReadinessDeps & { temporalMetricsUrl?: string }): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = req.method === 'GET' || req.method === 'HEAD' ? path : undefined;
    const answer =
      route === '/healthz' ? Promise.resolve(json(res, 200, { ok: true }))
      : route === '/readyz' ? readiness(deps).then((r) => { const a = readinessAnswer(r); json(res, a.status, a.body); })
      : route === '/metrics' ? workerMetrics(deps.temporalMetricsUrl).then((text) => { res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE }).end(text); })
      : Promise.resolve(json(res, 404, new ApiError('NOT_FOUND', `No route for ${req.method} ${path}; this listener serves /healthz, /readyz and /metrics.`).toBody()));
    answer.catch((err: Error) => {
      log.error('worker http error', { path, error: errorText(err) });
      if (!res.headersSent) json(res, 500, new ApiError('INTERNAL_SERVER_ERROR').toBody());
    });
  });
  server.listen(config.worker.httpPort, config.worker.httpHost);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => { throw new Error(`worker HTTP listener on ${config.worker.httpHost}:${config.worker.httpPort}: ${(err as Error).message} (set SHIPHOOK_WORKER_HTTP_PORT)`); })]);
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

/** shiphook's metrics, then the Temporal exporter's (its names start with `temporal_`, so none collide). */
async function workerMetrics(temporalMetricsUrl: string | undefined): Promise<string> {
  const own = await metricsText();
  if (!temporalMetricsUrl) return own;
  try {
    const res = await fetch(temporalMetricsUrl, { signal: AbortSignal.timeout(TEMPORAL_SCRAPE_TIMEOUT_MS) });
    return own + '\n' + (await res.text());
  } catch (err) {
    return own + `\n# Temporal SDK metrics unavailable: ${errorText(err, 100)}\n`;
  }
}
