import { loadConfig } from './config';
import { runAdmin } from './cli/admin';
import { runApi } from './cli/api';
import { runDev } from './cli/dev';
import { runEvents } from './cli/events';
import { runMigrate } from './cli/migrate';
import { runWorker } from './cli/worker';
import { setLogLevel } from './log';

const USAGE = `usage: shiphook <command>

  dev       everything on embedded defaults (PostgreSQL, Temporal dev server, worker, api)
  api       the HTTP API (needs DATABASE_URL and TEMPORAL_ADDRESS)
  worker    the Temporal worker (needs DATABASE_URL and TEMPORAL_ADDRESS)
  migrate   apply database migrations (needs DATABASE_URL)
  admin create-user --name N --email E [--phone P] [--password P] [--referral-customer] [--end-shipper]
  events replay [--status S] [--user-id U] [--webhook-id H] [--since T] [--until T]
`;

const [command, ...args] = process.argv.slice(2);
const config = loadConfig();
setLogLevel(config.logLevel);

const commands: Record<string, () => Promise<void>> = {
  dev: () => runDev(config),
  api: () => runApi(config),
  worker: () => runWorker(config),
  migrate: () => runMigrate(config),
  admin: () => runAdmin(config, args),
  events: () => runEvents(config, args),
};

const run = command ? commands[command] : undefined;
if (!run) {
  process.stderr.write(USAGE);
  process.exit(command ? 2 : 0);
}
try {
  await run();
} catch (err) {
  process.stderr.write(`shiphook ${command}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
