import { statSync } from 'node:fs';
import type pg from 'pg';
import { round } from './processes';
import { type BenchSystem, benchDb } from './system';

/**
 * Bytes on disk of every table of the schema (heap, TOAST and indexes:
 * pg_total_relation_size), a partitioned table as the sum of its partitions. Dead rows
 * count until vacuum reuses their space, as they do on the operator's disk.
 */
export async function tableBytes(db: pg.Client): Promise<Record<string, number>> {
  const { rows } = await db.query<{ relname: string; bytes: string }>(
    `select c.relname, coalesce((select sum(pg_total_relation_size(t.relid)) from pg_partition_tree(c.oid) t), pg_total_relation_size(c.oid)) as bytes
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition order by 2 desc`,
  );
  return Object.fromEntries(rows.map((r) => [r.relname, Number(r.bytes)]));
}

/**
 * The dev server's SQLite store in bytes (the database file, and its write-ahead log if
 * it keeps one; the rollback journal is a transaction's scratch copy): every workflow's
 * mutable state, history and visibility row. SQLite reuses freed pages but never gives
 * them back, so this is the store's high-water mark. Undefined while the
 * store is in memory (--temporal-memory) or Temporal is external.
 */
export function temporalStoreBytes(sys: BenchSystem): number | undefined {
  if (!sys.temporalDbFile) return undefined;
  return ['', '-wal'].reduce((s, suffix) => s + (statSync(sys.temporalDbFile + suffix, { throwIfNoEntry: false })?.size ?? 0), 0);
}

/** The tables a delivered event and its attempts write (the rest only change with accounts and webhooks). */
const EVENT_TABLES = ['events', 'event_deliveries', 'payloads'];

/** Storage growth around a scenario's step, divided by what it did (events delivered, attempts failed). */
export async function startStorageMeter(sys: BenchSystem) {
  const db = await benchDb(sys);
  const pgBefore = await tableBytes(db);
  const temporalBefore = temporalStoreBytes(sys);
  return {
    async stop(units: number) {
      const pgAfter = await tableBytes(db);
      await db.end();
      const temporalAfter = temporalStoreBytes(sys);
      const per = (after: number, before: number) => round((after - before) / Math.max(1, units), 0);
      const byTable = Object.fromEntries(EVENT_TABLES.map((t) => [t, per(pgAfter[t] ?? 0, pgBefore[t] ?? 0)]));
      return {
        postgres_bytes: Object.values(byTable).reduce((a, b) => a + b, 0),
        postgres_bytes_by_table: byTable,
        temporal_store_bytes: temporalAfter === undefined ? 'in memory (--temporal-memory)' : per(temporalAfter, temporalBefore!),
      };
    },
  };
}
