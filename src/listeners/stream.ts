import type { Config } from '../config';
import type { Db } from '../db/database';
import { watchChannel } from '../db/notifications';
import { errorText } from '../errors/error-text';
import { log } from '../log';
import type { EventStream } from '../operation';
import { LISTENER_REQUESTS_CHANNEL } from '../outbound/listener-transport';
import { keyStillActive } from '../account/api-keys';
import { removeAbandonedListeners, touchListener } from './listeners';
import { waitingRequests } from './requests';

/** The queue is read at least this often, whatever the notifications do. */
const POLL_MS = 2000;

/**
 * GET /listeners/:id/stream: the listener's delivery attempts, as server-sent events,
 * while its CLI is connected. `ready` first; then each request waiting for an answer, once
 * per connection (a CLI that reconnects gets again what it has not answered: at least
 * once); a keep-alive every heartbeat, which also marks the listener seen; `gone` when
 * it was removed. When the connection drops, the grace period starts: the listener's
 * deliveries wait in its queue (and time out into the retry schedule) until a stream
 * opens again, or the listener is removed at its end.
 */
/** What `gone` says, by why the stream ended. */
const GONE = {
  removed: 'The listener was removed.',
  keyRevoked: 'The API key this stream was opened with was disabled or deleted.',
} as const;

export function listenerStream(db: Db, config: Config, listenerId: string, keyId: string): EventStream {
  const { heartbeatMs, graceMs } = config.listeners;
  return {
    async run(sink, signal) {
      const watch = watchChannel(config.databaseUrl, LISTENER_REQUESTS_CHANNEL, (payload) => payload === listenerId);
      const sent = new Set<string>();
      let seenAt = 0;
      /** Why the stream ends for good, if it does: then `gone` says so. */
      let ended: keyof typeof GONE | undefined;
      try {
        sink.send('ready', { object: 'ListenerReady', listener_id: listenerId, heartbeat_ms: heartbeatMs });
        while (!signal.aborted) {
          if (Date.now() - seenAt >= heartbeatMs) {
            if (seenAt) sink.comment('keep-alive');
            if (!(await touchListener(db, listenerId))) {
              ended = 'removed';
              break;
            }
            // A key disabled or deleted stops what it opened, as it stops every later request.
            if (!(await keyStillActive(db, keyId))) {
              ended = 'keyRevoked';
              break;
            }
            seenAt = Date.now();
          }
          const waiting = await waitingRequests(db, listenerId);
          if (!waiting) {
            ended = 'removed';
            break;
          }
          for (const request of waiting) if (!sent.has(request.id)) sink.send('request', request);
          sent.clear();
          for (const request of waiting) sent.add(request.id);
          await watch.wait(Math.min(POLL_MS, seenAt + heartbeatMs - Date.now()), signal);
        }
        if (ended) sink.send('gone', { object: 'ListenerGone', reason: GONE[ended] });
      } finally {
        watch.close();
        // However the stream ended (the client went, or a failure), unless its listener was removed.
        if (ended !== 'removed') await dropped();
      }
    },
  };

  /** The connection dropped: the grace period runs from now; the listener goes at its end unless a stream opened meanwhile. */
  async function dropped(): Promise<void> {
    await touchListener(db, listenerId).catch(() => false);
    setTimeout(() => {
      removeAbandonedListeners(db, config, { id: listenerId }).catch((err: unknown) => log.warn('could not remove an abandoned listener', { listener_id: listenerId, error: errorText(err) }));
    }, graceMs + 1000).unref();
  }
}
