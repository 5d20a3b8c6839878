import { request } from 'undici';
import type { Config } from '../config';
import { seededKey } from './dev-state';

/**
 * The developer commands' way to a shiphook server (`listen`, `trigger`, `events
 * resend`): its public API only, with an API key, so they work against a remote
 * deployment as against `npm start`. The server: `--url`, else the local `npm start`
 * (HOST and PORT as it reads them). The key: `--api-key`, else SHIPHOOK_API_KEY, else the
 * test key of the user `npm start` seeded. Every failure is one sentence that says
 * what to do.
 */
export interface ApiClient {
  /** The server's origin, as shown to the developer. */
  origin: string;
  /** Where the key came from, for the error that refuses it. */
  keySource: string;
  call<T = Record<string, unknown>>(method: string, path: string, body?: unknown, opts?: { signal?: AbortSignal }): Promise<T>;
  /** The `Authorization` header the calls send. */
  authorization: string;
}

export interface ClientOptions {
  url?: string;
  'api-key'?: string;
}

/** An error of the API, with its code (`NOT_FOUND`, `MODE.CONFLICT`, …). */
export class ApiCallError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

/** The options every developer command takes, for its usage text. */
export const CLIENT_OPTIONS_USAGE = `  --url URL          the shiphook server (default: the local \`npm start\`, http://127.0.0.1:3000)
  --api-key KEY      the API key (default: SHIPHOOK_API_KEY, else the test key \`npm start\` seeded)`;

export function apiClient(config: Config, options: ClientOptions): ApiClient {
  const origin = (options.url ?? localServer(config)).replace(/\/+$/, '').replace(/\/v2$/, '');
  if (!/^https?:\/\/[^/]+/.test(origin)) throw new Error(`--url must be an http(s) URL of a shiphook server, like http://127.0.0.1:3000 (got ${options.url})`);
  const [key, keySource] = options['api-key'] ? [options['api-key'], '--api-key']
    : process.env.SHIPHOOK_API_KEY ? [process.env.SHIPHOOK_API_KEY, 'SHIPHOOK_API_KEY']
    : [seededKey(config.dataDir, 'test'), `the test key \`npm start\` seeded (${config.dataDir}/credentials.json)`];
  if (!key) throw new Error('no API key: pass --api-key KEY or set SHIPHOOK_API_KEY (with `npm start` running once, its test key is used)');
  const authorization = `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

  return {
    origin,
    keySource,
    authorization,
    async call<T>(method: string, path: string, body?: unknown, opts: { signal?: AbortSignal } = {}): Promise<T> {
      let res;
      try {
        res = await request(`${origin}/v2${path}`, {
          method: method as 'GET',
          headers: { authorization, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: opts.signal,
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        });
      } catch (err) {
        throw unreachable(origin, err);
      }
      const text = await res.body.text();
      let json: unknown = {};
      try {
        if (text) json = JSON.parse(text);
      } catch {
        throw new ApiCallError(res.statusCode, 'NOT_SHIPHOOK', `${origin} answered ${res.statusCode} with something other than shiphook's API: is --url right?`);
      }
      if (res.statusCode < 300) return json as T;
      throw refusal(res.statusCode, (json as { error?: ApiErrorBody }).error, keySource);
    },
  };
}

/** `npm start`'s API: HOST and PORT as the server reads them (a wildcard bind is reached on loopback). */
function localServer(config: Config): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

/** No answer at all from the server. */
export function unreachable(origin: string, err: unknown): Error {
  const code = (err as { code?: string; cause?: { code?: string } }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  const why = code === 'ECONNREFUSED' ? 'connection refused' : code === 'ENOTFOUND' ? 'no such host' : (err as Error).message;
  return new Error(`cannot reach shiphook at ${origin} (${why}): is \`npm start\` running? (--url for another server)`);
}

interface ApiErrorBody {
  code: string;
  message: string;
  errors?: unknown[];
}

/** The API's error in an answer's text, if it is one. */
export function errorOf(text: string): ApiErrorBody | undefined {
  try {
    return (JSON.parse(text) as { error?: ApiErrorBody }).error;
  } catch {
    return undefined;
  }
}

/** The API's error answer, as the developer needs to read it. */
export function refusal(status: number, error: ApiErrorBody | undefined, keySource: string): ApiCallError {
  if (status === 401) return new ApiCallError(status, 'UNAUTHORIZED', `the server refused the API key from ${keySource} (wrong, revoked, or of another server): pass --api-key or set SHIPHOOK_API_KEY`);
  if (!error) return new ApiCallError(status, 'UNKNOWN', `the server answered ${status}`);
  const details = (error.errors ?? []).map((e) => (typeof e === 'string' ? e : `${(e as { field: string }).field}: ${(e as { message: string }).message}`));
  return new ApiCallError(status, error.code, `${error.message}${details.length ? ` (${details.join('; ')})` : ''} [${error.code}]`);
}
