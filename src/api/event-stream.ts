import type { Response } from 'express';
import { errorText } from '../errors/error-text';
import { log } from '../log';
import type { EventStream } from '../operation';
import { requestIdOf } from './request-id';

/** The content type of a streamed answer: server-sent events. */
export const EVENT_STREAM = 'text/event-stream';

/**
 * Writes an operation's streamed answer (operation.ts, `stream`) as server-sent events:
 * no caching or proxy buffering, each event flushed as it is sent; the stream's signal
 * aborts when the client goes away, and the answer ends when the stream returns. Its
 * status is already set (an error before the stream starts is the API's JSON error).
 */
export async function sendEventStream(res: Response, stream: EventStream): Promise<void> {
  res.setHeader('Content-Type', `${EVENT_STREAM}; charset=utf-8`);
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  // A client that went while its request was being authorized closed the connection before
  // this listener: its stream would otherwise run, and keep its resources, for good.
  if (res.destroyed || res.socket?.destroyed !== false) gone.abort();
  const write = (text: string) => {
    if (!res.writableEnded && !res.destroyed) res.write(text);
  };
  try {
    await stream.run(
      {
        send: (event, data) => write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`),
        comment: (text) => write(`: ${text}\n\n`),
      },
      gone.signal,
    );
  } catch (err) {
    // The status line has left: all that is left to do is to end the stream.
    log.warn('event stream failed', { request_id: requestIdOf(res), error: errorText(err) });
  }
  if (!res.writableEnded) res.end();
}
