import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Structured logs: pino, one JSON object per line on stdout, level from LOG_LEVEL.
 * Call sites keep the small `log.info(msg, fields)` API. What must never reach a
 * log line is removed twice: by field name (pino's redaction: authorization,
 * secrets, keys, passwords, tokens) and by value in every string (API keys,
 * `user:password@` in URLs, Basic/Bearer credentials), so a secret that slips
 * into an error message is still masked.
 *
 * Lines written while a context is active (`withLogContext`: a request's id, a
 * delivery's event and webhook ids) carry its fields, however deep the caller.
 */
type Level = 'debug' | 'info' | 'warn' | 'error';
type Fields = Record<string, unknown>;

const SECRET_FIELDS = ['authorization', 'webhook_secret', 'secret', 'password', 'current_password', 'key', 'api_key', 'token', 'admin_token', 'cookie'];
const REDACT_PATHS = [...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`), '*.headers.authorization', '*.headers.cookie', '*.*.authorization'];

const MASKS: [RegExp, string][] = [
  [/\bshk_(test|prod)_[0-9a-f]+/gi, 'shk_$1_***'],
  // URL credentials: scheme://user:password@host and scheme://token@host
  [/(\/\/)[^\s/?#@"']+@/g, '$1***@'],
  [/\b(Basic|Bearer)\s+[A-Za-z0-9+/=._~-]+/gi, '$1 ***'],
];

/** Masks API keys, URL credentials and Authorization values inside a string. */
export function maskSecrets(text: string): string {
  let out = text;
  for (const [re, replacement] of MASKS) out = out.replace(re, replacement);
  return out;
}

function maskDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return maskSecrets(value);
  if (value === null || typeof value !== 'object' || depth > 6) return value;
  if (value instanceof Error) return { type: value.name, message: maskSecrets(value.message), stack: value.stack && maskSecrets(value.stack) };
  if (value instanceof Date) return value;
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, depth + 1));
  const out: Fields = {};
  // for…in, not Object.entries: pino's error serializer keeps some fields on a prototype.
  for (const k in value) out[k] = maskDeep((value as Fields)[k], depth + 1);
  return out;
}

const context = new AsyncLocalStorage<Fields>();

/** Runs `fn` with `fields` added to every log line written inside it (also across awaits). */
export function withLogContext<T>(fields: Fields, fn: () => T): T {
  return context.run({ ...context.getStore(), ...fields }, fn);
}

function initialLevel(): Level {
  const env = process.env.LOG_LEVEL;
  return env === 'debug' || env === 'info' || env === 'warn' || env === 'error' ? env : 'info';
}

function createLogger(level: Level, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => maskDeep(object) as Fields,
      },
      // A copy: pino merges each line's own fields into what the mixin returns.
      mixin: () => ({ ...context.getStore() }),
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

let logger = createLogger(initialLevel());

export function setLogLevel(level: Level): void {
  logger.level = level;
}

/** Lines go to stdout unless sent to a file (the test suite collects every process's lines). */
export function logToFile(file: string): void {
  logger = createLogger(logger.level as Level, pino.destination({ dest: file, append: true, sync: true, mkdir: true }));
}

/** Whether debug lines are written: lets hot paths skip building them at all. */
export const debugEnabled = () => logger.isLevelEnabled('debug');

export const log = {
  debug: (msg: string, fields?: Fields) => logger.debug(fields ?? {}, maskSecrets(msg)),
  info: (msg: string, fields?: Fields) => logger.info(fields ?? {}, maskSecrets(msg)),
  warn: (msg: string, fields?: Fields) => logger.warn(fields ?? {}, maskSecrets(msg)),
  error: (msg: string, fields?: Fields) => logger.error(fields ?? {}, maskSecrets(msg)),
};
