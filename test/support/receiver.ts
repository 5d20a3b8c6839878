import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
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

/** `port`: listen there (a receiver that goes down and comes back on the same URL). */
export async function startReceiver(answer: Answer = status(200), opts: { port?: number } = {}): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  let current = answer;
  const server: Server = createServer((req, res) => {
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
  });
  server.listen(opts.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
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
