import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { ephemeralRangeStart, freePort } from '../../src/launcher/ports';

const listen = (port: number) =>
  new Promise<net.Server>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

describe('freePort', () => {
  it('gives a port a server can bind, below the range the kernel hands out by itself (Linux, where that range starts above 10000)', async () => {
    const ephemeralFrom = ephemeralRangeStart();
    for (let i = 0; i < 20; i++) {
      const port = await freePort();
      if (ephemeralFrom && ephemeralFrom > 10_000) {
        expect(port).toBeGreaterThanOrEqual(10_000);
        expect(port).toBeLessThan(ephemeralFrom);
      }
      const server = await listen(port);
      await new Promise((done) => server.close(done));
    }
  });
});
