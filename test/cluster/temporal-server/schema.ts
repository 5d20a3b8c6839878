import { spawn } from 'node:child_process';
import { stderrTail } from '../../../src/launcher/child';
import type { EmbeddedDatabase } from '../../../src/launcher/postgres';
import { LaunchError } from '../../../src/launcher/launch-error';

/**
 * The Temporal server's two databases and their versioned schema, made by its schema tool as
 * compose's `temporal-schema` service makes them (the same commands, the same SQL_* variables):
 * create the database, set up the version tables, apply every schema version the tool embeds.
 * Each step does nothing when done already, so a database kept from an earlier run is brought
 * up to date instead.
 */
export const TEMPORAL_DATABASES = [
  { database: 'temporal', schemaName: 'postgresql/v12/temporal' },
  { database: 'temporal_visibility', schemaName: 'postgresql/v12/visibility' },
] as const;

export async function setupTemporalSchema(sqlTool: string, db: Pick<EmbeddedDatabase, 'url' | 'port'>): Promise<void> {
  const url = new URL(db.url);
  const connection = {
    SQL_PLUGIN: 'postgres12',
    SQL_HOST: url.hostname,
    SQL_PORT: String(db.port),
    SQL_USER: decodeURIComponent(url.username),
    // In the environment rather than on the command line, where `ps` shows it.
    SQL_PASSWORD: decodeURIComponent(url.password),
  };
  for (const { database, schemaName } of TEMPORAL_DATABASES) {
    const env = { PATH: process.env.PATH, ...connection, SQL_DATABASE: database };
    await sqlToolStep(sqlTool, ['create-database'], env);
    await sqlToolStep(sqlTool, ['setup-schema', '-v', '0.0'], env);
    await sqlToolStep(sqlTool, ['update-schema', '--schema-name', schemaName], env);
  }
}

function sqlToolStep(sqlTool: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(sqlTool, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    // The tool logs to stdout, errors included.
    const stdout = { text: '' };
    child.stdout?.on('data', (d: Buffer) => { stdout.text = (stdout.text + d.toString()).slice(-2000); });
    const stderr = stderrTail(child, 2000);
    child.once('error', (err) => reject(new LaunchError(`could not run the Temporal schema tool at ${sqlTool}: ${err.message}`)));
    child.once('exit', (code) => {
      if (code === 0) return resolve();
      const why = (stderr.text() + stdout.text).trim().split('\n').slice(-2).join(' ');
      reject(new LaunchError(`the Temporal schema tool failed (${args[0]} of ${env.SQL_DATABASE}, exit ${code}): ${why || 'no output'}`));
    });
  });
}
