import { availableParallelism } from 'node:os';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseNetworks } from './outbound/address-guard';

/**
 * All configuration, read once from the environment at start and passed down.
 * Production defaults are safe; tests and `shiphook dev` shrink timings through
 * the same variables.
 */
export interface Config {
  port: number;
  host: string;
  /** API processes sharing the port (Node cluster); `auto` in the environment = one per CPU. */
  apiProcesses: number;
  /** Unset in development: the launcher starts an embedded PostgreSQL. */
  databaseUrl?: string;
  /** Unset in development: the launcher starts a Temporal dev server. */
  temporalAddress?: string;
  temporalNamespace: string;
  taskQueue: string;
  temporalCliPath?: string;
  dataDir: string;
  /** Ports of the embedded services started by `shiphook dev`. */
  devPorts: { postgres: number; temporal: number; temporalUi: number };
  /** At least 32 characters (refused at start otherwise). */
  adminToken?: string;
  webhooks: {
    /**
     * Non-public networks webhooks may reach all the same (CIDR list; default none:
     * public addresses only). `shiphook dev` and the tests allow 127.0.0.0/8 and ::1.
     */
    allowedNetworks: ReturnType<typeof parseNetworks>;
    /** Permit `http://` webhook URLs (default false). */
    allowHttp: boolean;
    /** PEM of extra CAs trusted for webhook endpoints (SHIPHOOK_WEBHOOK_CA_FILE; private deployments, tests). */
    extraCa?: string;
  };
  /**
   * Requests per second per API key and per account (0 = off), production mode;
   * test mode gets a quarter, as Stripe (100/s live, 25/s test). The tighter
   * buckets count what amplifies outbound traffic or burns CPU, per account.
   */
  rateLimit: {
    perSecond: number;
    replaysPerMinute: number;
    purchasesPerMinute: number;
    childrenPerMinute: number;
    passwordChecksPerMinute: number;
  };
  /** Waits between delivery attempts; attempts = delays + 1. */
  retryDelaysMs: number[];
  attemptTimeoutMs: number;
  disableAfterFailures: number;
  disableAfterMs: number;
  /** How long a portal link (POST /v2/portal_sessions) stays valid. */
  portalSessionTtlMs: number;
  /** Origin of portal links (`https://api.example.com`); unset: the origin the request came to. */
  publicUrl?: string;
  /** How long a rotated-out webhook secret keeps signing beside the new one. */
  secretRotationGraceMs: number;
  /** The widest window one recovery (POST /v2/webhooks/:id/recover) may cover. */
  recoveryMaxWindowMs: number;
  testTrackerStepMs: number;
  /**
   * Events older than this are removed with their deliveries and Payloads (an event still
   * retrying is kept until it finishes); the Temporal namespace keeps closed histories as
   * long (docs/operations.md, Retention). Default 30 days, as Stripe keeps its events.
   */
  eventRetentionMs: number;
  /** How often the retention schedule runs (a Temporal Schedule, one run at a time). */
  retentionEveryMs: number;
  /** `shiphook listen`'s listeners (src/listeners/). */
  listeners: {
    /** How long a listener whose stream dropped is kept (its deliveries queued) for its CLI to reconnect; then it is removed. */
    graceMs: number;
    /** How often an open stream sends a keep-alive and marks its listener seen; under half the grace. */
    heartbeatMs: number;
    /** The longest wait between attempts to a listener, whatever the retry schedule says: a developer waits at the terminal. */
    maxRetryDelayMs: number;
  };
  worker: {
    /**
     * What a worker process serves: `all` (one process does everything), `deliveries`
     * (workflows, first attempts, the outbox dispatcher) or `retries` (later attempts,
     * from their own task queue, so they can run at a lower priority or on other machines).
     */
    role: WorkerRole;
    /**
     * Workflow tasks one worker runs at once; eager starts need a free one. Also the
     * first attempts it runs at once (each is one local activity inside its event's
     * task). A first attempt holds its task, its local activity slot and a place in
     * the cache until its slowest URL answers, so against an endpoint that hangs a
     * worker sustains slots ÷ attempt timeout events/s (500 ÷ 15 s: 33 events/s); the
     * local activity slots are set to the same number for that reason (the SDK's default
     * is 100).
     */
    workflowTaskSlots: number;
    /**
     * Workflows kept in memory between tasks; bounds the worker's RSS. It must exceed
     * the task slots: a task runs only on a cached workflow, so with fewer places
     * than tasks, tasks wait for evictions. Each cached run takes memory (what a full
     * cache costs: docs/performance.md). 0, the SDK's "no cache", is refused: it would
     * run one workflow at a time (loadConfig).
     */
    cachedWorkflows: number;
    /**
     * Later attempts one worker runs at once. A first retry due within 15 s waits
     * inside its activity (workflows/deliver-event.ts), holding a slot while it
     * waits: at 20 failing events/s with the 5 s first retry, ~100 slots.
     */
    retrySlots: number;
    /** A prebuilt workflow bundle (`shiphook bundle-workflows FILE`); unset: built at start. */
    workflowBundle?: string;
    /** The SDK's per-call deadlock watchdog and promise stack traces (off: src/engine/sandbox.ts). */
    workflowDiagnostics: boolean;
    /** The worker's own HTTP listener (/healthz, /readyz, /metrics); port 0 = any free port. */
    httpPort: number;
    httpHost: string;
  };
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /**
   * Export OpenTelemetry traces (docs/operations.md, Traces): on when the standard
   * variables name an exporter, OTEL_EXPORTER_OTLP_ENDPOINT (or …_TRACES_ENDPOINT) or
   * OTEL_TRACES_EXPORTER, unless OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
   * Off: no SDK started, no interceptor installed, no span made. The SDK reads the rest
   * (protocol, sampler, service name, headers) from the same variables itself.
   */
  tracing: boolean;
}

export type WorkerRole = 'all' | 'deliveries' | 'retries';
const WORKER_ROLES: WorkerRole[] = ['all', 'deliveries', 'retries'];

export const MIN_ADMIN_TOKEN_LENGTH = 32;
/** What `shiphook dev` and the tests let webhooks reach besides public addresses. */
export const LOOPBACK_NETWORKS = '127.0.0.0/8,::1/128';

/** The shortest retention and retention period accepted. */
const MIN_RETENTION_MS = 60_000;

/**
 * The fewest workflow task slots a worker takes. The SDK's pollers (the sticky queue's most of
 * all) reserve slots; with 8, a task held by a first retry waiting in it kept the next events'
 * tasks queued until it ended (found by test/engine/worker-processes.test.ts, which uses 20).
 */
const MIN_TASK_SLOTS = 20;

export const DEFAULT_RETRY_DELAYS = '5s,5m,30m,2h,5h,10h,10h';

/**
 * A setting the environment gives that shiphook refuses. Its message is one line naming the
 * variable, what it got and what it takes; `shiphook` prints it and exits 1, with no stack.
 */
export class SettingRefused extends Error {
  /** `got`: the value as given (quoted here), or for a secret what it was like, never the value. */
  constructor(readonly variable: string, got: string, takes: string) {
    super(`${variable} is ${got}; it takes ${takes}`);
    this.name = 'SettingRefused';
  }
}

/** Refuses the value the environment gave `name` (or, unset, its default `fallback`). */
function refuse(name: string, value: string | undefined, takes: string, fallback?: number): SettingRefused {
  const got = value === undefined || value === '' ? (fallback === undefined ? 'unset' : `${fallback} (its default)`) : JSON.stringify(value);
  return new SettingRefused(name, got, takes);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  if (env.SHIPHOOK_ALLOW_INSECURE_WEBHOOKS) {
    throw refuse('SHIPHOOK_ALLOW_INSECURE_WEBHOOKS', env.SHIPHOOK_ALLOW_INSECURE_WEBHOOKS, `nothing any more: unset it and set SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS (e.g. ${LOOPBACK_NETWORKS}) and SHIPHOOK_WEBHOOK_ALLOW_HTTP=true instead`);
  }
  const config = readConfig(env);
  if (config.adminToken !== undefined && config.adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new SettingRefused('SHIPHOOK_ADMIN_TOKEN', `${config.adminToken.length} characters long`, `at least ${MIN_ADMIN_TOKEN_LENGTH} characters (e.g. \`openssl rand -hex 32\`)`);
  }
  if (config.eventRetentionMs < MIN_RETENTION_MS) {
    throw refuse('SHIPHOOK_EVENT_RETENTION', env.SHIPHOOK_EVENT_RETENTION, 'a duration of at least 1m (events younger than that are still being delivered)');
  }
  if (config.retentionEveryMs < MIN_RETENTION_MS) {
    throw refuse('SHIPHOOK_RETENTION_EVERY', env.SHIPHOOK_RETENTION_EVERY, 'a duration of at least 1m (a Temporal Schedule runs at most once a minute here)');
  }
  if (config.listeners.heartbeatMs * 2 > config.listeners.graceMs) {
    throw new Error('SHIPHOOK_LISTENER_HEARTBEAT must be at most half of SHIPHOOK_LISTENER_GRACE (a connected listener must never look gone)');
  }
  if (config.worker.workflowTaskSlots < MIN_TASK_SLOTS) {
    throw refuse('SHIPHOOK_WORKER_TASK_SLOTS', env.SHIPHOOK_WORKER_TASK_SLOTS, `at least ${MIN_TASK_SLOTS} (the Temporal SDK's pollers reserve some: with fewer, one event waiting on a slow endpoint, or on its first retry, holds the next events' tasks back)`);
  }
  if (config.worker.cachedWorkflows === 0) {
    // The SDK's "no cache" (sdk-core: a cache of one, emptied after each task) makes a new
    // run's first task wait until the running one has finished (docs/performance.md).
    throw refuse('SHIPHOOK_WORKER_CACHED_WORKFLOWS', env.SHIPHOOK_WORKER_CACHED_WORKFLOWS, 'more than SHIPHOOK_WORKER_TASK_SLOTS: 0 would make the worker run one workflow at a time (the Temporal SDK then keeps room for one), so a slow endpoint would hold every other event back');
  }
  if (config.worker.cachedWorkflows <= config.worker.workflowTaskSlots) {
    throw refuse('SHIPHOOK_WORKER_CACHED_WORKFLOWS', env.SHIPHOOK_WORKER_CACHED_WORKFLOWS, `more than SHIPHOOK_WORKER_TASK_SLOTS (${config.worker.workflowTaskSlots}): a workflow task runs only on a cached workflow`, config.worker.cachedWorkflows);
  }
  return config;
}

function readConfig(env: NodeJS.ProcessEnv): Config {
  return {
    port: int(env.PORT, 3000, 'PORT'),
    host: env.HOST || '127.0.0.1',
    apiProcesses: env.SHIPHOOK_API_PROCESSES === 'auto' ? availableParallelism() : Math.max(1, int(env.SHIPHOOK_API_PROCESSES, 1, 'SHIPHOOK_API_PROCESSES')),
    databaseUrl: env.DATABASE_URL || undefined,
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.SHIPHOOK_TASK_QUEUE || 'shiphook',
    temporalCliPath: env.TEMPORAL_CLI_PATH || undefined,
    dataDir: resolve(env.SHIPHOOK_DATA_DIR || '.data'),
    devPorts: {
      postgres: int(env.SHIPHOOK_PG_PORT, 54329, 'SHIPHOOK_PG_PORT'),
      temporal: int(env.SHIPHOOK_TEMPORAL_PORT, 7233, 'SHIPHOOK_TEMPORAL_PORT'),
      temporalUi: int(env.SHIPHOOK_TEMPORAL_UI_PORT, 8233, 'SHIPHOOK_TEMPORAL_UI_PORT'),
    },
    adminToken: env.SHIPHOOK_ADMIN_TOKEN || undefined,
    webhooks: {
      allowedNetworks: networks(env.SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS, 'SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS'),
      allowHttp: bool(env.SHIPHOOK_WEBHOOK_ALLOW_HTTP, 'SHIPHOOK_WEBHOOK_ALLOW_HTTP'),
      extraCa: env.SHIPHOOK_WEBHOOK_CA_FILE ? pemFile(env.SHIPHOOK_WEBHOOK_CA_FILE, 'SHIPHOOK_WEBHOOK_CA_FILE') : undefined,
    },
    rateLimit: {
      perSecond: int(env.SHIPHOOK_RATE_LIMIT_PER_SECOND, 100, 'SHIPHOOK_RATE_LIMIT_PER_SECOND'),
      replaysPerMinute: int(env.SHIPHOOK_RATE_LIMIT_REPLAYS_PER_MINUTE, 60, 'SHIPHOOK_RATE_LIMIT_REPLAYS_PER_MINUTE'),
      purchasesPerMinute: int(env.SHIPHOOK_RATE_LIMIT_PURCHASES_PER_MINUTE, 300, 'SHIPHOOK_RATE_LIMIT_PURCHASES_PER_MINUTE'),
      childrenPerMinute: int(env.SHIPHOOK_RATE_LIMIT_CHILDREN_PER_MINUTE, 60, 'SHIPHOOK_RATE_LIMIT_CHILDREN_PER_MINUTE'),
      passwordChecksPerMinute: int(env.SHIPHOOK_RATE_LIMIT_PASSWORD_CHECKS_PER_MINUTE, 10, 'SHIPHOOK_RATE_LIMIT_PASSWORD_CHECKS_PER_MINUTE'),
    },
    retryDelaysMs: durations(env.SHIPHOOK_RETRY_DELAYS ?? DEFAULT_RETRY_DELAYS, 'SHIPHOOK_RETRY_DELAYS'),
    attemptTimeoutMs: duration(env.SHIPHOOK_ATTEMPT_TIMEOUT || '15s', 'SHIPHOOK_ATTEMPT_TIMEOUT'),
    disableAfterFailures: int(env.SHIPHOOK_DISABLE_AFTER_FAILURES, 20, 'SHIPHOOK_DISABLE_AFTER_FAILURES'),
    disableAfterMs: duration(env.SHIPHOOK_DISABLE_AFTER || '5d', 'SHIPHOOK_DISABLE_AFTER'),
    portalSessionTtlMs: duration(env.SHIPHOOK_PORTAL_SESSION_TTL || '1h', 'SHIPHOOK_PORTAL_SESSION_TTL'),
    publicUrl: env.SHIPHOOK_PUBLIC_URL?.replace(/\/+$/, '') || undefined,
    secretRotationGraceMs: duration(env.SHIPHOOK_SECRET_ROTATION_GRACE || '24h', 'SHIPHOOK_SECRET_ROTATION_GRACE'),
    recoveryMaxWindowMs: duration(env.SHIPHOOK_RECOVERY_MAX_WINDOW || '14d', 'SHIPHOOK_RECOVERY_MAX_WINDOW'),
    testTrackerStepMs: duration(env.SHIPHOOK_TEST_TRACKER_STEP || '1m', 'SHIPHOOK_TEST_TRACKER_STEP'),
    eventRetentionMs: duration(env.SHIPHOOK_EVENT_RETENTION || '30d', 'SHIPHOOK_EVENT_RETENTION'),
    retentionEveryMs: duration(env.SHIPHOOK_RETENTION_EVERY || '1h', 'SHIPHOOK_RETENTION_EVERY'),
    listeners: {
      graceMs: duration(env.SHIPHOOK_LISTENER_GRACE || '60s', 'SHIPHOOK_LISTENER_GRACE'),
      heartbeatMs: duration(env.SHIPHOOK_LISTENER_HEARTBEAT || '15s', 'SHIPHOOK_LISTENER_HEARTBEAT'),
      maxRetryDelayMs: duration(env.SHIPHOOK_LISTENER_MAX_RETRY_DELAY || '10s', 'SHIPHOOK_LISTENER_MAX_RETRY_DELAY'),
    },
    worker: {
      role: oneOf(env.SHIPHOOK_WORKER_ROLE, WORKER_ROLES, 'all', 'SHIPHOOK_WORKER_ROLE'),
      workflowTaskSlots: int(env.SHIPHOOK_WORKER_TASK_SLOTS, 500, 'SHIPHOOK_WORKER_TASK_SLOTS'),
      cachedWorkflows: int(env.SHIPHOOK_WORKER_CACHED_WORKFLOWS, 600, 'SHIPHOOK_WORKER_CACHED_WORKFLOWS'),
      retrySlots: int(env.SHIPHOOK_WORKER_RETRY_SLOTS, 1000, 'SHIPHOOK_WORKER_RETRY_SLOTS'),
      workflowBundle: env.SHIPHOOK_WORKFLOW_BUNDLE || undefined,
      workflowDiagnostics: bool(env.SHIPHOOK_WORKFLOW_DIAGNOSTICS, 'SHIPHOOK_WORKFLOW_DIAGNOSTICS'),
      httpPort: int(env.SHIPHOOK_WORKER_HTTP_PORT, 9464, 'SHIPHOOK_WORKER_HTTP_PORT'),
      httpHost: env.SHIPHOOK_WORKER_HTTP_HOST || '127.0.0.1',
    },
    logLevel: (['debug', 'info', 'warn', 'error'] as const).find((l) => l === env.LOG_LEVEL) ?? 'info',
    tracing: env.OTEL_SDK_DISABLED !== 'true' && env.OTEL_TRACES_EXPORTER !== 'none' && Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_TRACES_EXPORTER),
  };
}

function int(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw refuse(name, value, 'a whole number, 0 or more');
  return n;
}

function bool(value: string | undefined, name: string): boolean {
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw refuse(name, value, 'true or false');
}

function oneOf<T extends string>(value: string | undefined, allowed: T[], fallback: T, name: string): T {
  if (value === undefined || value === '') return fallback;
  if (!allowed.includes(value as T)) throw refuse(name, value, `one of ${allowed.join(', ')}`);
  return value as T;
}

function networks(value: string | undefined, name: string): ReturnType<typeof parseNetworks> {
  try {
    return parseNetworks(value ?? '');
  } catch {
    throw refuse(name, value, 'CIDR ranges separated by commas (e.g. 10.0.0.0/8,fd00::/8)');
  }
}

function pemFile(file: string, name: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw refuse(name, file, `a PEM file shiphook can read (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
}

/** Later attempts wait and run on their own task queue, beside the main one. */
export const retryTaskQueue = (config: Pick<Config, 'taskQueue'>) => `${config.taskQueue}-retries`;

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

const DURATION_EXAMPLES = 'e.g. 500ms, 5s, 30m, 2h, 1d';

/** Parses `250ms`, `5s`, `30m`, `2h`, `5d` (or a bare number of milliseconds). */
export function duration(text: string, name = 'duration'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!m) throw refuse(name, text, `a duration (${DURATION_EXAMPLES})`);
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 'ms']!);
}

export function durations(text: string, name: string): number[] {
  if (text.trim() === '') return [];
  try {
    return text.split(',').map((part) => duration(part));
  } catch {
    throw refuse(name, text, `durations separated by commas (${DURATION_EXAMPLES})`);
  }
}
