import type { WorkerRole } from '../../src/config';
import { searchAttributes } from '../../src/engine/contract';
import { CLI_TYPE } from '../../src/launcher/temporal-operator';

/**
 * The production topology as docker-compose.yml describes it, in the one place the
 * cluster test (test/cluster/cluster.ts) starts it from and the drift test
 * (test/deploy/cluster-drift.test.ts) holds compose to: a change to either that the
 * other does not follow fails `npm test`.
 */

/**
 * shiphook's services, by compose service name: what each runs, as how many processes here,
 * and compose's `mem_limit` for each of its containers (docs/operations.md, "Processes and
 * their memory"), which the cluster test holds each process's peak to.
 */
export const SERVICES = {
  migrate: { command: 'migrate', replicas: 1, memLimit: '256m' },
  api: { command: 'api', replicas: 2, memLimit: '512m' },
  worker: { command: 'worker', role: 'deliveries', replicas: 2, memLimit: '1g' },
  'worker-retries': { command: 'worker', role: 'retries', replicas: 1, memLimit: '512m' },
} as const satisfies Record<string, { command: 'migrate' | 'api' | 'worker'; role?: WorkerRole; replicas: number; memLimit: string }>;

/** A compose byte value (`512m`, `1g`) in MB. */
export function megabytes(limit: string): number {
  const m = /^(\d+)([kmg])$/.exec(limit);
  if (!m) throw new Error(`not a compose byte value: ${limit}`);
  return Number(m[1]) * { k: 1 / 1024, m: 1, g: 1024 }[m[2] as 'k' | 'm' | 'g'];
}

export type ServiceName = keyof typeof SERVICES;

/** The environment every shiphook service gets (compose's `x-shiphook-env`), by name. */
export const SHARED_ENV_NAMES = [
  'DATABASE_URL',
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'SHIPHOOK_ADMIN_TOKEN',
  'HOST',
  'PORT',
  'SHIPHOOK_WORKER_HTTP_HOST',
  'SHIPHOOK_WORKER_HTTP_PORT',
  'SHIPHOOK_EVENT_RETENTION',
] as const;

export type SharedEnv = Record<(typeof SHARED_ENV_NAMES)[number], string>;

/** What a worker service adds to the shared environment (compose: `SHIPHOOK_WORKER_ROLE`). */
export const ROLE_ENV = 'SHIPHOOK_WORKER_ROLE';

/** A name that configures shiphook or its connections: compose sets these, and only these. */
export const isSetting = (name: string) => /^(SHIPHOOK_|TEMPORAL_|DATABASE_URL$|HOST$|PORT$|LOG_LEVEL$)/.test(name);

/** The parent's environment without shiphook's settings: what every process of the cluster inherits. */
export const withoutSettings = (parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(parent).filter(([name]) => !isSetting(name)));

/**
 * The environment a service's process gets: compose's names (shared, and the role of a
 * worker), then the cluster's own settings (`extra`: its timings, a prebuilt workflow bundle),
 * over the parent's environment without any setting of its own — a developer's
 * `SHIPHOOK_RETRY_DELAYS` in the shell must not reach the cluster.
 */
export function serviceEnv(service: Exclude<ServiceName, 'migrate'>, shared: SharedEnv, extra: Record<string, string>, parent: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const spec = SERVICES[service];
  return { ...withoutSettings(parent), ...extra, ...shared, ...('role' in spec ? { [ROLE_ENV]: spec.role } : {}) };
}

/** The Temporal server's dynamic config file (compose mounts it) and history shards: its launcher's. */
export { DYNAMIC_CONFIG_FILE, HISTORY_SHARDS } from './temporal-server/environment';

/** shiphook's search attributes as compose's `temporal operator search-attribute create` registers them. */
export const SEARCH_ATTRIBUTES: { name: string; type: string }[] = searchAttributes.map((a) => ({ name: a.name, type: CLI_TYPE[a.type]! }));
