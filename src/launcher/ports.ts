import net from 'node:net';
import { LaunchError } from './launch-error';

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
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

export interface WantedPort {
  port: number;
  host?: string;
  /** What wants it, for the message: "the API", "PostgreSQL". */
  name: string;
  /** The variable that moves it. */
  variable: string;
}

/**
 * Fails with one line naming the port and the variable that moves it when something
 * already listens there. Checked before anything is started, so a taken port never
 * leaves half a system running, and never mistaken for a server of ours.
 */
export async function assertPortsFree(ports: WantedPort[]): Promise<void> {
  for (const p of ports) {
    const host = p.host ?? '127.0.0.1';
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen({ port: p.port, host, exclusive: true }, () => server.close(() => resolve(true)));
    });
    if (!free) throw new LaunchError(`port ${p.port} on ${host} is taken (wanted for ${p.name}); stop what uses it or set ${p.variable} to another port`);
  }
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

/** Resolves once something accepts TCP connections on host:port (after the caller started it). */
export async function waitForPort(port: number, host = '127.0.0.1', timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await acceptsConnections(port, host)) return;
    if (Date.now() > deadline) throw new LaunchError(`nothing listens on ${host}:${port} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
