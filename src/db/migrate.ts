import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, Migrator } from 'kysely';
import type { Db } from './database';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

const migrator = (db: Db) => new Migrator({ db, provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }) });

/** Applies every pending migration in migrations/ (dated files, frozen once landed). */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const { error, results } = await migrator(db).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Migrations in migrations/ that the database has not run yet (readiness: the schema is current). */
export async function pendingMigrations(db: Db): Promise<string[]> {
  return (await migrator(db).getMigrations()).filter((m) => !m.executedAt).map((m) => m.name);
}
