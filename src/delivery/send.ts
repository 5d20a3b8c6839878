import { Agent, errors, request } from 'undici';

/**
 * One outbound POST. One keep-alive pool per worker process; connect and total
 * time bounded by the attempt timeout; redirects are never followed (a 3xx is a
 * failed attempt); at most 64 KiB of the response body is read.
 */
export const MAX_RESPONSE_READ = 64 * 1024;

export interface SendResult {
  /** 0 when no response arrived (timeout, connection error). */
  status: number;
  headers: Record<string, string>;
  body: string;
  totalTimeMs: number;
  error?: string;
}

let agent: Agent | undefined;
let agentTimeout = 0;

function pool(timeoutMs: number): Agent {
  if (!agent || agentTimeout !== timeoutMs) {
    agent = new Agent({ connect: { timeout: timeoutMs }, keepAliveTimeout: 30_000, connections: 64, pipelining: 1 });
    agentTimeout = timeoutMs;
  }
  return agent;
}

export async function send(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const res = await request(url, {
      method: 'POST',
      headers,
      body,
      dispatcher: pool(timeoutMs),
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      chunks.push(buf);
      size += buf.length;
      if (size >= MAX_RESPONSE_READ) {
        res.body.destroy();
        break;
      }
    }
    return {
      status: res.statusCode,
      headers: flattenHeaders(res.headers),
      body: Buffer.concat(chunks).subarray(0, MAX_RESPONSE_READ).toString('utf8'),
      totalTimeMs: elapsed(),
    };
  } catch (err) {
    const timedOut = err instanceof errors.HeadersTimeoutError || err instanceof errors.BodyTimeoutError || err instanceof errors.ConnectTimeoutError || (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError';
    return { status: 0, headers: {}, body: '', totalTimeMs: elapsed(), error: timedOut ? `timed out after ${timeoutMs} ms` : describe(err) };
  }
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  return (e.cause?.code ?? e.code ?? '') + ' ' + (e.cause?.message ?? e.message ?? String(err));
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}
