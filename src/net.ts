import net from 'node:net';

/**
 * TCP probes that production code needs (the worker waits for Temporal to accept
 * connections; its runtime binds a metrics port) and that the dev launcher uses too.
 */

/** A free port of the kernel's choosing, for a listener this process opens at once (no time for another to take it). */
export function ephemeralPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Whether something accepts a TCP connection on host:port now (the connection is closed at
 * once); false after `timeoutMs` too (a host that drops connection attempts).
 */
export function acceptsConnections(port: number, host = '127.0.0.1', timeoutMs = 5000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    socket.setTimeout(timeoutMs, () => { socket.destroy(); resolve(false); });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}
