import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, Migrator, sql } from 'kysely';
import type { Db } from './database';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

/** Applies every pending migration in migrations/ (dated files, frozen once landed). */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Migrations in migrations/ that the database has not run yet (readiness: the schema
 * is current). By name, as Kysely records them, without loading the files.
 */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const files = (await fs.readdir(MIGRATIONS_DIR)).filter((f) => /\.(ts|js|mjs)$/.test(f) && !f.endsWith('.d.ts')).map((f) => f.replace(/\.[^.]+$/, ''));
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db).catch((err: { code?: string }) => {
    if (err.code === '42P01') return { rows: [] }; // no migration table: nothing has run
    throw err;
  });
  const done = new Set(rows.map((r) => r.name));
  return files.filter((name) => !done.has(name)).sort();
}
