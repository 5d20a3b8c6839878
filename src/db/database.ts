import { Kysely, PostgresDialect, type RawBuilder, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { log } from '../log';
import { preparedStatementPool } from './prepared-statements';
import type { ApiKeysTable } from '../account/tables';
import type { EventDeliveriesTable, EventsTable, ReplaysTable } from '../events/tables';
import type { PayloadsTable } from '../events/tables';
import type { PortalSessionsTable } from '../portal-sessions/tables';
import type { EndShippersTable } from '../end-shippers/tables';
import type { IdempotencyKeysTable } from '../idempotency/tables';
import type { ShipmentsTable, TrackersTable } from '../shipments/tables';
import type { UsersTable } from '../account/tables';
import type { WebhooksTable } from '../webhooks/tables';
import type { OperationalEventKeysTable } from '../operational-webhooks/tables';
import type { ListenerRequestsTable, ListenersTable } from '../listeners/tables';
import { errorText } from '../errors/error-text';

/** Every table, by name. Each resource's table type lives in its own file under tables/. */
export interface Database {
  users: UsersTable;
  api_keys: ApiKeysTable;
  webhooks: WebhooksTable;
  events: EventsTable;
  event_deliveries: EventDeliveriesTable;
  replays: ReplaysTable;
  payloads: PayloadsTable;
  end_shippers: EndShippersTable;
  shipments: ShipmentsTable;
  trackers: TrackersTable;
  portal_sessions: PortalSessionsTable;
  idempotency_keys: IdempotencyKeysTable;
  operational_event_keys: OperationalEventKeysTable;
  listeners: ListenersTable;
  listener_requests: ListenerRequestsTable;
}

export type Db = Kysely<Database>;
/** Repository functions take either the pool or a transaction. */
export type Executor = Kysely<Database> | Transaction<Database>;

/**
 * `column = anyOf(ids)` for `column in (…ids)`: one array parameter keeps the statement
 * text, and so its prepared plan (prepared-statements.ts), the same for any number of ids.
 */
export function anyOf(ids: readonly string[]): RawBuilder<string> {
  return sql<string>`any(${ids}::text[])`;
}

// numeric stays a string (money is exact); int8 counts become numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/** How long a query waits for a connection (PostgreSQL down or every connection busy). */
const CONNECT_TIMEOUT_MS = 5000;
/** A statement running longer is cancelled by the server; the client gives up a little later. */
const STATEMENT_TIMEOUT_MS = 15_000;

/**
 * Every pg pool of the process (Kysely's, the rate limiter's): bounded waits, and an
 * idle connection the server closed (restart, admin shutdown) is reported and dropped
 * instead of ending the process — without a listener Node would end it on that error.
 */
export function createPgPool(databaseUrl: string, maxConnections: number, opts: { allowExitOnIdle?: boolean } = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: maxConnections,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    // Covers what statement_timeout cannot: a server that stopped answering at all.
    query_timeout: STATEMENT_TIMEOUT_MS + 2000,
    allowExitOnIdle: opts.allowExitOnIdle,
  });
  pool.on('error', (err) => log.warn('database connection lost; the pool opens a new one when needed', { error: errorText(err) }));
  // pg-pool listens for errors only while a connection is idle. One that PostgreSQL ends
  // while it is checked out (a restart) — even in the packet that ends its handshake,
  // before the caller could listen — would be an unhandled 'error' event that ends the
  // process. Listening from creation on is enough: the connection is then not queryable,
  // its next query fails as "database unavailable", and pg-pool drops it on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * Connections of a process's pool (api, worker). Each is a PostgreSQL backend with its own
 * memory (catalog caches, the plans of its prepared statements); a statement here is short
 * and no transaction waits on anything outside the database, so a few serve one process's
 * load, and the pool opens them only as concurrency needs them (what a backend holds, and
 * what a larger pool cost the embedded PostgreSQL's peak: docs/performance.md).
 */
export const DB_POOL_CONNECTIONS = 4;

export function createDb(databaseUrl: string, maxConnections = DB_POOL_CONNECTIONS): Db {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparedStatementPool(createPgPool(databaseUrl, maxConnections)) }) });
}

const UNAVAILABLE_NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);

/**
 * Whether an error means "the database cannot be reached right now" rather than a
 * bug: refused or dropped connections, the pool's connect timeout, and the
 * SQLSTATEs of a server shutting down or starting (class 08 connection exceptions,
 * 57P01–57P03 admin/crash shutdown and "cannot connect now", 57014 query cancelled
 * by our timeouts).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (UNAVAILABLE_NETWORK_CODES.has(code)) return true;
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '57014') return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error/i.test(message);
}
