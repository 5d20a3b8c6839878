import { Kysely, PostgresDialect, type RawBuilder, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { preparedStatementPool } from './prepared-statements';
import type { ApiKeysTable } from './tables/api-keys';
import type { EventDeliveriesTable, EventsTable } from './tables/events';
import type { PayloadsTable } from './tables/payloads';
import type { PortalSessionsTable } from './tables/portal-sessions';
import type { EndShippersTable, ShipmentsTable, TrackersTable } from './tables/shipping';
import type { UsersTable } from './tables/users';
import type { WebhooksTable } from './tables/webhooks';

/** Every table, by name. Each resource's table type lives in its own file under tables/. */
export interface Database {
  users: UsersTable;
  api_keys: ApiKeysTable;
  webhooks: WebhooksTable;
  events: EventsTable;
  event_deliveries: EventDeliveriesTable;
  payloads: PayloadsTable;
  end_shippers: EndShippersTable;
  shipments: ShipmentsTable;
  trackers: TrackersTable;
  portal_sessions: PortalSessionsTable;
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

export function createDb(databaseUrl: string, maxConnections = 10): Db {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: maxConnections });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparedStatementPool(pool) }) });
}
