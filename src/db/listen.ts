import pg from 'pg';
import { log } from '../log';
import { errorText } from '../errors/error-text';

const RELISTEN_DELAY_MS = 1000;

export interface Listener {
  /** True while notifications are being received (false before the first connect and after a loss). */
  readonly listening: boolean;
  close(): Promise<void>;
}

/**
 * LISTENs on a PostgreSQL channel over a connection of its own, reconnecting after
 * a loss. `onState(true)` after every (re)connect: whatever was notified meanwhile
 * was missed, so callers catch up then; `onState(false)` when the connection is lost.
 */
export function listen(databaseUrl: string, channel: string, onNotify: (payload: string) => void, onState: (listening: boolean) => void = () => undefined): Listener {
  let current: pg.Client | undefined;
  let closed = false;
  const connect = async () => {
    if (closed) return;
    const conn = new pg.Client({ connectionString: databaseUrl });
    let lost = false;
    const lose = (err: Error) => {
      if (lost) return; // connect() rejecting and the client's 'error' event report the same loss
      lost = true;
      if (current === conn) {
        current = undefined;
        onState(false);
      }
      if (!closed) log.warn('lost the connection that LISTENs', { channel, error: errorText(err) });
      void conn.end().catch(() => undefined);
      if (!closed) setTimeout(() => void connect(), RELISTEN_DELAY_MS).unref();
    };
    conn.on('notification', (n) => onNotify(n.payload ?? ''));
    conn.on('error', lose);
    conn.on('end', () => lose(new Error('connection ended')));
    try {
      await conn.connect();
      await conn.query(`LISTEN ${channel}`);
      if (closed) return void conn.end().catch(() => undefined);
      current = conn;
      onState(true);
    } catch (err) {
      lose(err as Error);
    }
  };
  void connect();
  return {
    get listening() {
      return current !== undefined;
    },
    async close() {
      closed = true;
      const conn = current;
      current = undefined;
      await conn?.end().catch(() => undefined);
    },
  };
}
