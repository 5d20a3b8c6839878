import { readFileSync } from 'node:fs';
import net from 'node:net';
import { acceptsConnections, ephemeralPort } from '../net';
import { LaunchError } from './launch-error';

/** Where freePort() starts looking below the ephemeral range (above the well-known ports and the usual ones of local servers: 3000, 5432, 8080, …). */
const PICKED_PORTS_FROM = 10_000;
/** Tries before freePort() settles for a port of the kernel's choosing. */
const PICK_TRIES = 50;

/**
 * A TCP port on 127.0.0.1 that nothing listens on right now, for a server that binds it
 * later (often another process, seconds later, or again after a restart). On Linux it is
 * taken between 10000 and the kernel's ephemeral range: the kernel hands ports of that
 * range out by itself, to every `listen(0)` and every outgoing connection of every
 * process, so a port probed free there can be gone before its server binds it. Below
 * the range only an explicit bind takes it (another caller of this function could, at
 * one chance in ~20,000). Without /proc, or with an ephemeral range that starts at or
 * below 10000, the kernel picks one.
 */
export async function freePort(): Promise<number> {
  const ephemeralFrom = ephemeralRangeStart();
  if (ephemeralFrom && ephemeralFrom > PICKED_PORTS_FROM) {
    for (let i = 0; i < PICK_TRIES; i++) {
      const port = PICKED_PORTS_FROM + Math.floor(Math.random() * (ephemeralFrom - PICKED_PORTS_FROM));
      if (await isFree(port, '127.0.0.1')) return port;
    }
  }
  return ephemeralPort();
}

/** The first port of Linux's ephemeral range; undefined elsewhere. */
export function ephemeralRangeStart(): number | undefined {
  try {
    const from = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(from) && from > 0 ? from : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a listener could bind host:port now (nothing listens there). */
function isFree(port: number, host: string): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
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
    if (!(await isFree(p.port, host))) throw new LaunchError(`port ${p.port} on ${host} is taken (wanted for ${p.name}); stop what uses it or set ${p.variable} to another port`);
  }
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
