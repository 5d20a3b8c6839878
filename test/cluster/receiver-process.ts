import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setNice } from '../../src/launcher/child';

/**
 * A webhook receiver in a process of its own that answers 200 and notes when each request
 * arrived: timing arrivals to the millisecond needs an event loop that nothing else keeps
 * busy, and the test's own is publishing meanwhile (a stall there stamps requests that came
 * 100 ms apart a few ms apart). It runs at a higher CPU priority than the system under test,
 * as a merchant's server on a machine of its own would: on two cores shared with two apis,
 * three workers and both databases, a receiver starved for a tenth of a second stamps what
 * arrived meanwhile all at once. `GET /arrivals` answers what it noted.
 */
const SERVER = `
const arrivals = [];
require('node:http').createServer((req, res) => {
  if (req.method === 'GET') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(arrivals));
  const at = Date.now();
  const chunks = [];
  req.on('data', (c) => chunks.push(c)).on('end', () => {
    let id;
    try { id = JSON.parse(Buffer.concat(chunks).toString()).id; } catch {}
    arrivals.push({ id, at, attempt: Number(req.headers['x-shiphook-attempt']) });
    res.writeHead(200).end('ok');
  });
}).listen(0, '127.0.0.1', function () { process.stdout.write(this.address().port + '\\n'); });
`;

export interface Arrival {
  id: string;
  at: number;
  attempt: number;
}

export interface ReceiverProcess {
  url: string;
  /** Each request's event id, arrival time (epoch ms) and \`X-Shiphook-Attempt\`, in arrival order. */
  arrivals(): Promise<Arrival[]>;
  close(): Promise<void>;
}

export async function startReceiverProcess(): Promise<ReceiverProcess> {
  const child: ChildProcess = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    if (child.pid) setNice(child.pid, -10);
  } catch {
    // not root: it runs at the default priority, and a loaded machine may bunch its stamps
  }
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const origin = `http://127.0.0.1:${line.toString().trim()}`;
  return {
    url: `${origin}/hook`,
    arrivals: async () => (await fetch(`${origin}/arrivals`)).json() as Promise<Arrival[]>,
    async close() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill();
      await exited;
    },
  };
}
