import { fileURLToPath } from 'node:url';
import type { EmbeddedDatabase } from '../../../src/launcher/postgres';

/**
 * What the cluster's Temporal server is configured with, apart from the code that builds and
 * starts it, so that the drift test (`npm test`) can hold docker-compose.yml to it without
 * reaching the build.
 */

/** The dynamic config compose mounts into its server, used here by path. */
export const DYNAMIC_CONFIG_FILE = fileURLToPath(new URL('../../../deploy/temporal/dynamicconfig/shiphook.yaml', import.meta.url));

/** History shards, as compose's NUM_HISTORY_SHARDS: fixed for the life of a cluster's database. */
export const HISTORY_SHARDS = 4;

/** The ports of the server's one process on 127.0.0.1, gRPC and membership for each service. */
export interface ServerPorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

/**
 * The variables the temporalio/server image's configuration template reads (compose gives
 * its server the same names), for one process of all four services on 127.0.0.1. Nothing
 * else from this process's environment reaches the server: what the template reads is
 * exactly this.
 */
export function temporalServerEnv(db: Pick<EmbeddedDatabase, 'url' | 'port'>, ports: ServerPorts, metricsPort?: number): NodeJS.ProcessEnv {
  const url = new URL(db.url);
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DB: 'postgres12',
    POSTGRES_SEEDS: url.hostname,
    DB_PORT: String(db.port),
    POSTGRES_USER: decodeURIComponent(url.username),
    POSTGRES_PWD: decodeURIComponent(url.password),
    NUM_HISTORY_SHARDS: String(HISTORY_SHARDS),
    DYNAMIC_CONFIG_FILE_PATH: DYNAMIC_CONFIG_FILE,
    BIND_ON_IP: '127.0.0.1',
    LOG_LEVEL: 'warn',
    FRONTEND_GRPC_PORT: String(ports.frontend),
    FRONTEND_HTTP_PORT: String(ports.frontendHttp),
    FRONTEND_MEMBERSHIP_PORT: String(ports.frontendMembership),
    HISTORY_GRPC_PORT: String(ports.history),
    HISTORY_MEMBERSHIP_PORT: String(ports.historyMembership),
    MATCHING_GRPC_PORT: String(ports.matching),
    MATCHING_MEMBERSHIP_PORT: String(ports.matchingMembership),
    WORKER_GRPC_PORT: String(ports.worker),
    WORKER_MEMBERSHIP_PORT: String(ports.workerMembership),
    ...(metricsPort !== undefined ? { PROMETHEUS_ENDPOINT: `127.0.0.1:${metricsPort}` } : {}),
  };
}
