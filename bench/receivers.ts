import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

/**
 * Local webhook receivers for the benchmark: record the first arrival time of each
 * event id (from the `webhook-id` header) and of its first 2XX, and answer 200, or
 * 500/503 while failing, or nothing at all while hanging (the sender's timeout ends it).
 */
export interface BenchReceiver {
  url: string;
  firstSeen: Map<string, number>;
  /** Event id → when it was first answered 2XX (epoch ms). */
  acknowledged: Map<string, number>;
  requests: number;
  /** Event id → requests received for it (every attempt). */
  requestsById: Map<string, number>;
  /** While set: the status to answer, or `'hang'` to take the request and never answer. */
  failWith: number | 'hang' | null;
  close(): Promise<void>;
}

export async function startBenchReceiver(): Promise<BenchReceiver> {
  const r: BenchReceiver = { url: '', firstSeen: new Map(), acknowledged: new Map(), requests: 0, requestsById: new Map(), failWith: null, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const at = performance.timeOrigin + performance.now();
    req.resume();
    req.on('end', () => {
      r.requests++;
      const id = String(req.headers['webhook-id'] ?? '');
      if (id && !r.firstSeen.has(id)) r.firstSeen.set(id, at);
      if (id) r.requestsById.set(id, (r.requestsById.get(id) ?? 0) + 1);
      if (r.failWith === 'hang') return;
      if (r.failWith) {
        res.writeHead(r.failWith).end();
        return;
      }
      if (id && !r.acknowledged.has(id)) r.acknowledged.set(id, at);
      res.writeHead(200).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  };
  return r;
}

export function percentiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN);
  return { count: sorted.length, p50: Math.round(at(50)), p95: Math.round(at(95)), p99: Math.round(at(99)), max: Math.round(sorted[sorted.length - 1] ?? NaN) };
}
