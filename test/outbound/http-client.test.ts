import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNetworks } from '../../src/outbound/address-guard';
import { createHttpClient } from '../../src/outbound/http-client';

/**
 * The outbound client on its own, with a resolver the test controls: what the
 * connection resolves is what it connects to, checked, and failures say why
 * without naming an address.
 */
describe('outbound HTTP client', () => {
  let internal: Server; // stands for a service on the worker's own network
  let allowed: Server; // a receiver in an allowed network, on the same port
  let port: number;
  let internalConnections = 0;

  beforeAll(async () => {
    internal = createServer((_req, res) => res.end('secret'));
    internal.on('connection', () => internalConnections++);
    internal.listen(0, '127.0.0.1');
    await once(internal, 'listening');
    port = (internal.address() as AddressInfo).port;
    allowed = createServer((_req, res) => res.end('ok'));
    allowed.listen(port, '127.0.0.2');
    await once(allowed, 'listening');
  });
  afterAll(async () => {
    for (const s of [internal, allowed]) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  const policy = { allowedNetworks: parseNetworks('127.0.0.2/32'), allowHttp: true, timeoutMs: 2000 };

  it('resolves once per connection and connects to the address it checked (DNS rebinding)', async () => {
    // A zero-TTL name: first a permitted address, then an internal one.
    const answers = [['127.0.0.2'], ['127.0.0.1']];
    let lookups = 0;
    const lookup = async () => answers[Math.min(lookups++, answers.length - 1)]!;

    const first = createHttpClient({ ...policy, lookup });
    const ok = await first.post(`http://rebind.example.com:${port}/hook`, {}, '{}');
    expect(ok.status).toBe(200);
    expect(ok.body).toBe('ok');
    expect(lookups).toBe(1); // no second resolution between the check and the connection
    await first.close();

    const second = createHttpClient({ ...policy, lookup });
    const refused = await second.post(`http://rebind.example.com:${port}/hook`, {}, '{}');
    await second.close();
    expect(refused.status).toBe(0);
    expect(refused.error).toBe('the host resolves to an address webhooks may not reach (not public)');
    expect(internalConnections).toBe(0);
  });

  it('checks every address a name resolves to', async () => {
    const client = createHttpClient({ ...policy, lookup: async () => ['127.0.0.2', '127.0.0.1'] });
    const result = await client.post(`http://both.example.com:${port}/hook`, {}, '{}');
    await client.close();
    expect(result.error).toMatch(/not public/);
    expect(internalConnections).toBe(0);
  });

  it('refuses IP literals outside the allowed networks without connecting', async () => {
    const client = createHttpClient({ ...policy, lookup: async () => { throw new Error('an IP literal is not looked up'); } });
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]']) {
      const result = await client.post(`http://${host}:${port}/hook`, {}, '{}');
      expect(result.error, host).toMatch(/not public/);
    }
    expect((await client.post(`http://127.0.0.2:${port}/hook`, {}, '{}')).status).toBe(200);
    await client.close();
    expect(internalConnections).toBe(0);
  });

  it('bounds DNS by a timeout that fails the attempt', async () => {
    const client = createHttpClient({ ...policy, timeoutMs: 300, lookup: () => new Promise<string[]>(() => undefined) });
    const started = Date.now();
    const result = await client.post('http://slow-dns.example.com/hook', {}, '{}');
    await client.close();
    expect(result.status).toBe(0);
    expect(result.error).toMatch(/did not resolve in time|timed out/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("stores no address and no resolver's message in the error", async () => {
    const client = createHttpClient({
      ...policy,
      allowedNetworks: parseNetworks('127.0.0.0/8'),
      lookup: async (host) => {
        if (host === 'broken.example.com') throw Object.assign(new Error('getaddrinfo EAI_AGAIN broken.example.com via 10.9.8.7'), { code: 'EAI_AGAIN' });
        return ['127.0.0.3'];
      },
    });
    const closedPort = await freeClosedPort();
    const results = [
      await client.post(`http://closed.example.com:${closedPort}/hook`, {}, '{}'),
      await client.post(`http://127.0.0.3:${closedPort}/hook`, {}, '{}'),
      await client.post('http://broken.example.com/hook', {}, '{}'),
    ];
    await client.close();
    expect(results.map((r) => r.error)).toEqual(['connection refused', 'connection refused', 'the host name could not be resolved']);
    for (const r of results) expect(r.error).not.toMatch(/\d+\.\d+\.\d+\.\d+|EAI_AGAIN|:\d{2,5}/);
  });

  it('refuses http unless allowed', async () => {
    const client = createHttpClient({ ...policy, allowHttp: false });
    const result = await client.post(`http://127.0.0.2:${port}/hook`, {}, '{}');
    await client.close();
    expect(result).toMatchObject({ status: 0, error: 'webhook URL must use https' });
  });
});

async function freeClosedPort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}
