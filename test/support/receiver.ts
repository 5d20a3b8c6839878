import { createServer, type IncomingHttpHeaders, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as TlsServerOptions } from 'node:https';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

/** A customer's webhook endpoint: a real HTTP server in the test process. */
export interface Delivery {
  /** The request's path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json: any;
  at: number;
}

export type Answer = (delivery: Delivery, index: number, res: ServerResponse) => void;

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** Changes how the next deliveries are answered. */
  answer(fn: Answer): void;
  waitFor(count: number, timeoutMs?: number): Promise<Delivery[]>;
  close(): Promise<void>;
}

export const status = (code: number, headers: Record<string, string> = {}): Answer => (_d, _i, res) => {
  res.writeHead(code, headers).end(code >= 400 ? 'nope' : 'ok');
};

/**
 * `tls`: an HTTPS receiver (its URL names `host`, default 127.0.0.1, for the certificate to match).
 * `port`: listen there (a receiver that goes down and comes back on the same URL).
 */
export async function startReceiver(answer: Answer = status(200), opts: { tls?: TlsServerOptions; host?: string; port?: number } = {}): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  let current = answer;
  const listener: RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        json = undefined;
      }
      const delivery = { url: req.url ?? '', headers: req.headers, body, json, at: Date.now() };
      deliveries.push(delivery);
      current(delivery, deliveries.length - 1, res);
    });
  };
  const server: Server = opts.tls ? createHttpsServer(opts.tls, listener) : createServer(listener);
  const host = opts.host ?? '127.0.0.1';
  server.listen(opts.port ?? 0, host);
  await once(server, 'listening');
  const url = `${opts.tls ? 'https' : 'http'}://${host}:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    deliveries,
    answer: (fn) => { current = fn; },
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (deliveries.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} deliveries at ${url}, got ${deliveries.length}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return deliveries;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Polls until `check` returns a value that is not undefined. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
