import type { Config } from '../config';
import { createDb } from '../db/database';
import { migrateToLatest } from '../db/migrate';
import { readDevState } from './dev-state';

export async function runMigrate(config: Config): Promise<void> {
  const url = config.databaseUrl ?? readDevState(config.dataDir)?.databaseUrl;
  if (!url) throw new Error('DATABASE_URL must be set');
  const db = createDb(url, 1);
  try {
    const applied = await migrateToLatest(db);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'up to date\n');
  } finally {
    await db.destroy();
  }
}
