import type { WorkerRole } from '../../src/config';
import { searchAttributes } from '../../src/engine/contract';

/**
 * The production topology as docker-compose.yml describes it, in the one place the
 * cluster test (test/cluster/cluster.ts) starts it from and the drift test
 * (test/deploy/cluster-drift.test.ts) holds compose to: a change to either that the
 * other does not follow fails `npm test`.
 */

/** shiphook's services, by compose service name: what each runs, as how many processes here. */
export const SERVICES = {
  migrate: { command: 'migrate', replicas: 1 },
  api: { command: 'api', replicas: 2 },
  worker: { command: 'worker', role: 'deliveries', replicas: 2 },
  'worker-retries': { command: 'worker', role: 'retries', replicas: 1 },
} as const satisfies Record<string, { command: 'migrate' | 'api' | 'worker'; role?: WorkerRole; replicas: number }>;

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

/** The Temporal server's dynamic config: the file compose mounts, read by path. */
export const DYNAMIC_CONFIG_FILE = 'deploy/temporal/dynamicconfig/shiphook.yaml';

/** History shards of the Temporal server (compose: NUM_HISTORY_SHARDS). */
export const HISTORY_SHARDS = 4;

/** The temporal CLI's name of each search attribute type (`--type Keyword`). */
const cliType = (type: string) => type.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase());

/** shiphook's search attributes as compose's `temporal operator search-attribute create` registers them. */
export const SEARCH_ATTRIBUTES: { name: string; type: string }[] = searchAttributes.map((a) => ({ name: a.name, type: cliType(a.type) }));
