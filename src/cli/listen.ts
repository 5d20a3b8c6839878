import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import type { Config } from '../config';
import { parseTypePatterns } from '../events/type-patterns';
import { MAX_ANSWER_BODY } from '../listeners/listeners.schema';
import { newWebhookSecret } from '../webhooks/secret-rotation';
import { ApiCallError, apiClient, type ApiClient, CLIENT_OPTIONS_USAGE, errorOf, refusal, unreachable } from './api-client';
import { serverSentEvents } from './server-sent-events';

const USAGE = `usage: shiphook listen --forward-to URL [--events LIST] [--secret S] [--live] [--url URL] [--api-key KEY]

Forwards the events of the key's user to URL on this machine while it runs, signed as a
webhook gets them, and prints one line per event (time, type, event id, the answer's
status and duration); each answer is recorded as the delivery attempt. It connects to the
server's API (a stream); the server never connects to this machine.

  --forward-to URL   where to POST each event, e.g. http://localhost:4000/hook (http:// when no scheme)
  --events LIST      the types to forward, as a webhook's event_types: tracker.*,batch.created (default: all)
  --secret S         sign with this secret (default: the one kept in .data/listen-secret)
  --live             forward production events (a production key is refused without it)
${CLIENT_OPTIONS_USAGE}

It prints Ready! and the signing secret once its stream is open: events reach this machine
from then on. The secret is kept in the data dir (.data/listen-secret), so it stays the same
from run to run. If the connection drops, it reconnects and gets what it missed; Ctrl-C
removes the listener at once, and the server removes one whose connection stayed down for
its grace period (60 s by default).`;

/** Reconnection waits: from the first to the longest. */
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5000;
/** Silence before the first `ready` (which says the heartbeat) that counts as a dead connection. */
const DEFAULT_IDLE_MS = 45_000;
const MAX_HEADER_VALUE = 8192;
const MAX_HEADERS = 100;

interface ListenerRequest {
  id: string;
  headers: Record<string, string>;
  body: string;
  expires_at: string;
}

interface Listener {
  id: string;
  mode: string;
  secret: string;
}

/** The server ended the stream for good: the listener was removed, or the key stopped authenticating. */
class ListenerGone extends Error {}

/** `shiphook listen --forward-to URL`: see USAGE. */
export async function runListen(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      'forward-to': { type: 'string' },
      events: { type: 'string' },
      secret: { type: 'string' },
      live: { type: 'boolean' },
      url: { type: 'string' },
      'api-key': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return void process.stdout.write(`${USAGE}\n`);
  if (!values['forward-to']) throw new Error(`--forward-to is required\n${USAGE}`);
  const forwardTo = forwardUrl(values['forward-to']);
  const eventTypes = values.events ? eventPatterns(values.events) : null;
  const api = apiClient(config, values);
  const secret = values.secret ?? listenSecret(config.dataDir);
  const create = () =>
    api.call<Listener>('POST', '/listeners', { listener: { forward_to: forwardTo, event_types: eventTypes, secret, ...(values.live ? { mode: 'production' } : {}) } });

  let listener = await create();
  const what = `${listener.mode} events (${eventTypes ? eventTypes.join(', ') : 'every type'})`;
  // Said once the stream is open (its `ready`), not when the listener is made: from then on an event reaches this machine.
  let greeted = false;
  const greet = () => {
    greeted = true;
    say(`Ready! Forwarding ${what} to ${forwardTo} (listener ${listener.id} at ${api.origin})`);
    say(`Your webhook signing secret is ${listener.secret} (^C to quit)`);
  };

  const stopped = new AbortController();
  let stopping = false;
  const stop = async () => {
    if (stopping) process.exit(130); // a second Ctrl-C: leave without waiting
    stopping = true;
    stopped.abort();
    try {
      await api.call('DELETE', `/listeners/${listener.id}`, undefined, { signal: AbortSignal.timeout(5000) });
      say(`Stopped: listener ${listener.id} removed.`);
    } catch (err) {
      say(`Stopped; the listener could not be removed now (${(err as Error).message}): the server removes it after its grace period.`);
    }
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());

  const forwarding = new Set<string>();
  const forward = (req: ListenerRequest) => {
    if (forwarding.has(req.id)) return; // sent again after a reconnect while still on its way
    forwarding.add(req.id);
    void forwardOne(api, listener.id, forwardTo, req).finally(() => forwarding.delete(req.id));
  };

  let waitMs = 0;
  let lost = false;
  let expired = false;
  while (!stopped.signal.aborted) {
    try {
      if (expired) {
        listener = await create();
        expired = false;
        say(`The listener had been removed while the connection was down; listening again as ${listener.id} (same secret).`);
      }
      await receive(api, listener.id, stopped.signal, {
        ready: () => {
          if (!greeted) greet();
          else if (lost) say('Reconnected.');
          lost = false;
          waitMs = 0;
        },
        request: forward,
      });
    } catch (err) {
      if (stopped.signal.aborted) break;
      if (err instanceof ListenerGone) throw new Error(`listener ${listener.id}: ${err.message}`);
      if (err instanceof ApiCallError && err.status === 404) {
        expired = true;
        continue;
      }
      if (err instanceof ApiCallError && err.status === 401) throw err;
      if (!lost) say(`Lost the connection to ${api.origin} (${(err as Error).message}); reconnecting…`);
      lost = true;
      await sleep(waitMs, undefined, { signal: stopped.signal }).catch(() => undefined);
      waitMs = Math.min(Math.max(FIRST_RETRY_MS, waitMs * 2), MAX_RETRY_MS);
    }
  }
  await new Promise(() => undefined); // `stop` ends the process
}

/** One connection of the stream, until it drops (throws why) or `stopped` aborts it. */
async function receive(api: ApiClient, listenerId: string, stopped: AbortSignal, on: { ready(): void; request(req: ListenerRequest): void }): Promise<void> {
  const connection = new AbortController();
  const abort = () => connection.abort();
  stopped.addEventListener('abort', abort, { once: true });
  let idleMs = DEFAULT_IDLE_MS;
  let idle: NodeJS.Timeout | undefined;
  const alive = () => {
    clearTimeout(idle);
    idle = setTimeout(() => connection.abort(new Error(`no keep-alive for ${Math.round(idleMs / 1000)} s`)), idleMs);
  };
  try {
    let res;
    try {
      res = await request(`${api.origin}/v2/listeners/${listenerId}/stream`, {
        method: 'GET',
        headers: { authorization: api.authorization, accept: 'text/event-stream' },
        signal: connection.signal,
        headersTimeout: 30_000,
        bodyTimeout: 0, // the idle watchdog bounds the silence instead
      });
    } catch (err) {
      throw connection.signal.aborted ? (connection.signal.reason as Error) : unreachable(api.origin, err);
    }
    if (res.statusCode !== 200) {
      throw refusal(res.statusCode, errorOf(await res.body.text()), api.keySource);
    }
    alive();
    try {
      for await (const event of serverSentEvents(res.body, alive)) {
        const data = JSON.parse(event.data) as { heartbeat_ms?: number } & ListenerRequest;
        if (event.event === 'ready') {
          idleMs = 3 * (data.heartbeat_ms ?? DEFAULT_IDLE_MS / 3);
          alive();
          on.ready();
        } else if (event.event === 'request') on.request(data);
        else if (event.event === 'gone') throw new ListenerGone((data as { reason?: string }).reason ?? 'The listener was removed.');
      }
    } catch (err) {
      if (err instanceof ListenerGone || !connection.signal.aborted) throw err;
      throw connection.signal.reason as Error;
    }
    throw new Error('the server ended the stream');
  } finally {
    clearTimeout(idle);
    stopped.removeEventListener('abort', abort);
    connection.abort();
  }
}

/** POSTs one request to the local URL as the server signed it, prints its line, and posts the answer back. */
async function forwardOne(api: ApiClient, listenerId: string, forwardTo: string, req: ListenerRequest): Promise<void> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // The answer must reach the server before the attempt times out.
  const budgetMs = Math.max(1000, Date.parse(req.expires_at) - Date.now() - 500);
  let answer: { status: number; headers?: Record<string, string>; body?: string; total_time: number; error?: string };
  try {
    const res = await request(forwardTo, { method: 'POST', headers: req.headers, body: req.body, signal: AbortSignal.timeout(budgetMs), headersTimeout: budgetMs, bodyTimeout: budgetMs });
    const body = await readAtMost(res.body, MAX_ANSWER_BODY);
    answer = { status: res.statusCode, headers: answerHeaders(res.headers), body, total_time: elapsed() };
  } catch (err) {
    answer = { status: 0, error: localError(err, budgetMs), total_time: elapsed() };
  }
  const header = (name: string) => Object.entries(req.headers).find(([k]) => k.toLowerCase() === name)?.[1] ?? '?';
  const attempt = header('x-shiphook-attempt');
  say(`${timestamp()}  ${header('x-shiphook-event-type')}  ${header('webhook-id')}  ${answer.status ? `[${answer.status}]` : `[${answer.error}]`} ${answer.total_time} ms${attempt !== '1' ? `  (attempt ${attempt})` : ''}`);
  for (let tries = 1; ; tries++) {
    try {
      await api.call('POST', `/listeners/${listenerId}/requests/${req.id}/answer`, answer);
      return;
    } catch (err) {
      if (err instanceof ApiCallError && err.status === 404) return say(`  (answered too late for that attempt: shiphook sends the event again)`);
      const busy = err instanceof ApiCallError && (err.status === 429 || err.status === 503);
      if (!busy || tries >= 5) return say(`  (the answer could not be reported: ${(err as Error).message}; shiphook sends the event again)`);
      await sleep(tries * 500);
    }
  }
}

async function readAtMost(body: AsyncIterable<Buffer>, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= max) break;
  }
  // The API keeps text PostgreSQL can store: a NUL of a binary answer is shown as U+FFFD.
  return Buffer.concat(chunks).subarray(0, max).toString('utf8').slice(0, max).replace(/\u0000/g, '\ufffd');
}

function answerHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers).slice(0, MAX_HEADERS)) {
    if (value !== undefined) out[name] = (Array.isArray(value) ? value.join(', ') : value).slice(0, MAX_HEADER_VALUE).replace(/\u0000/g, '\ufffd');
  }
  return out;
}

/** Why the local endpoint gave no answer, in a few words. */
function localError(err: unknown, budgetMs: number): string {
  const e = err as { name?: string; code?: string; cause?: { code?: string }; message?: string };
  const code = e.code ?? e.cause?.code;
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || code?.includes('TIMEOUT')) return `timed out after ${budgetMs} ms`;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND') return 'no such host';
  return code ?? e.message ?? 'failed';
}

/** `localhost:4000/hook` → `http://localhost:4000/hook`; only http(s). */
function forwardUrl(text: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new Error(`--forward-to: ${text} is not a URL (e.g. http://localhost:4000/hook)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--forward-to must be an http or https URL (got ${text})`);
  return url.toString();
}

/** `--events tracker.*,batch.created`: the same patterns as a webhook's event_types. */
function eventPatterns(text: string): string[] {
  const parsed = parseTypePatterns(text.split(/[\s,]+/).filter(Boolean));
  if ('problems' in parsed) throw new Error(`--events: ${parsed.problems.map((p) => p.message).join('; ')}`);
  if (parsed.patterns.length === 0) throw new Error('--events: give at least one event type or pattern (tracker.*, *), or leave it out for every type');
  return parsed.patterns;
}

/**
 * The signing secret, kept in the data dir so a receiver configured with it keeps working
 * from run to run (as `stripe listen`'s); made at the first run.
 */
function listenSecret(dataDir: string): string {
  const file = path.join(dataDir, 'listen-secret');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    const secret = newWebhookSecret();
    try {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(file, `${secret}\n`, { mode: 0o600 });
    } catch {
      // A read-only folder: this run's secret only.
    }
    return secret;
  }
}

const timestamp = () => {
  const d = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};

const say = (line: string) => void process.stdout.write(`${line}\n`);
