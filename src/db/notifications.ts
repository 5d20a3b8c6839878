import { type Listener, listen } from './listen';

/**
 * Waiting for a NOTIFY that concerns one thing (a listener's queue, one request's
 * answer), for code that waits in a loop: check the database, then `wait`. The watches
 * of a process share one LISTEN connection per channel, opened by the first watch and
 * closed LINGER_MS after the last one closed (so a loop of short waits does not open a
 * connection each time). A watch wakes on a notification its filter takes, after every
 * (re)connect of that connection (what was notified meanwhile was missed), and at the
 * latest after the wait's bound, which covers a notification lost any other way.
 */
const LINGER_MS = 10_000;

export interface Watch {
  /** Resolves at the next notification the filter takes (or one that came since the last wait), after `ms`, or when `signal` aborts. */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  close(): void;
}

interface Channel {
  listener: Listener;
  watches: Set<(payload: string) => void>;
  closing?: NodeJS.Timeout;
}

const channels = new Map<string, Channel>();

/** `databaseUrl` undefined: no LISTEN, the waits run to their bound (polling). */
export function watchChannel(databaseUrl: string | undefined, channel: string, takes: (payload: string) => boolean): Watch {
  let rung = false;
  let wake: (() => void) | undefined;
  const ring = (payload: string) => {
    if (payload !== '' && !takes(payload)) return;
    rung = true;
    wake?.();
  };
  const leave = databaseUrl ? join(databaseUrl, channel, ring) : () => undefined;
  return {
    async wait(ms, signal) {
      if (!rung && !signal?.aborted) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            wake = undefined;
            resolve();
          };
          const timer = setTimeout(done, ms);
          signal?.addEventListener('abort', done, { once: true });
          wake = done;
        });
      }
      rung = false;
    },
    close: leave,
  };
}

function join(databaseUrl: string, channel: string, ring: (payload: string) => void): () => void {
  const key = `${channel} ${databaseUrl}`;
  let entry = channels.get(key);
  if (!entry) {
    const watches = new Set<(payload: string) => void>();
    const notifyAll = (payload: string) => {
      for (const w of watches) w(payload);
    };
    entry = { watches, listener: listen(databaseUrl, channel, notifyAll, (up) => up && notifyAll('')) };
    channels.set(key, entry);
  }
  clearTimeout(entry.closing);
  entry.closing = undefined;
  entry.watches.add(ring);
  const joined = entry;
  let left = false;
  return () => {
    if (left) return;
    left = true;
    joined.watches.delete(ring);
    if (joined.watches.size > 0) return;
    joined.closing = setTimeout(() => {
      channels.delete(key);
      void joined.listener.close();
    }, LINGER_MS);
    joined.closing.unref();
  };
}
