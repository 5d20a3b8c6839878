import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/** Distinct statements kept prepared per connection (texts vary with IN lists and batch sizes). */
const MAX_PER_CONNECTION = 300;
/** SQLSTATE of "cached plan must not change result type": a migration changed a table under a plan. */
const PLAN_INVALIDATED = '0A000';

/**
 * A pg pool for Kysely whose queries run as named prepared statements: PostgreSQL
 * parses and plans each distinct statement once per connection instead of on
 * every call, which is most of the database's CPU for a short query
 * (docs/performance.md).
 *
 * After a migration changes a table, a prepared `select *` on it fails once with
 * "cached plan must not change result type". Outside a transaction the query is
 * then run again unprepared; either way the connection is destroyed when it is
 * released, taking its stale plans with it.
 */
export function preparedStatementPool(pool: pg.Pool): PostgresPool {
  const names = new WeakMap<pg.PoolClient, Map<string, string>>();
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let prepared = names.get(client);
      if (!prepared) names.set(client, (prepared = new Map()));
      let inTransaction = false;
      let stale = false;
      const query = async (text: string, values: ReadonlyArray<unknown>) => {
        const verb = text.slice(0, 8).toLowerCase();
        if (verb.startsWith('begin') || verb.startsWith('start')) inTransaction = true;
        else if (verb.startsWith('commit') || verb.startsWith('rollback')) inTransaction = false;
        let name = prepared.get(text);
        if (!name && prepared.size < MAX_PER_CONNECTION) prepared.set(text, (name = `s${prepared.size}`));
        if (!name || stale) return client.query(text, values as unknown[]);
        try {
          return await client.query({ name, text, values: values as unknown[] });
        } catch (err) {
          if ((err as { code?: string }).code !== PLAN_INVALIDATED) throw err;
          stale = true;
          if (inTransaction) throw err; // PostgreSQL aborted the transaction; its caller retries
          return client.query(text, values as unknown[]);
        }
      };
      // Kysely only calls query(sql, parameters) (no cursors here) and release().
      return { query, release: () => client.release(stale) } as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}
