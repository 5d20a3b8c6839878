import { type Config, loadConfig, SettingRefused } from './config';
import { log, setLogLevel } from './log';

const USAGE = `usage: shiphook <command>

  dev       everything on embedded defaults (PostgreSQL, Temporal dev server, worker, api)
  api       the HTTP API (needs DATABASE_URL and TEMPORAL_ADDRESS)
  worker    the Temporal worker (needs DATABASE_URL and TEMPORAL_ADDRESS)
  migrate   apply database migrations (needs DATABASE_URL)
  admin create-user --name N --email E [--phone P] [--password-stdin] [--referral-customer] [--end-shipper]
            (password: first line of stdin with --password-stdin, or SHIPHOOK_NEW_USER_PASSWORD; never argv)
  admin retention --now   run the retention schedule at once; prints what it removed
  events replay [--status S] [--user-id U] [--webhook-id H] [--since T] [--until T]

  listen --forward-to URL [--events LIST] [--live]   forward the key's events to this machine
  trigger TYPE              publish a test event of TYPE (tracker.updated, …) for the key's user
  events resend EVENT_ID [--webhook ID]               deliver an event again
            (these three use the API: --url of the server, default \`npm start\`'s; --api-key,
            SHIPHOOK_API_KEY, or \`npm start\`'s test key; each takes --help)

  bundle-workflows FILE   write the workers' workflow bundle (then set SHIPHOOK_WORKFLOW_BUNDLE=FILE)
            with --traced: that of workers that export traces, which find it beside theirs (x.js → x.traced.js)
  keys      print the seeded user's keys as shell variables: eval "$(npx shiphook keys)"
  provision fetch the tools the project runs but does not ship (the temporal CLI), if missing
  temporal ARGS…  that temporal CLI, at TEMPORAL_ADDRESS or \`npm start\`'s dev server, e.g.
            npx shiphook temporal workflow list --query "ExecutionStatus='Running' AND ShiphookEventStatus='failed'"
`;

const [command, ...args] = process.argv.slice(2);
const config = settings();
setLogLevel(config.logLevel);
// A crash is one JSON line (message and stack, masked), not Node's dump of the objects
// involved (a pg client's dump holds its connection password).
process.on('uncaughtException', (err) => {
  log.error('uncaught exception; exiting', { error: err });
  process.exit(1);
});

// Each command loads only what it needs: the api never loads the Temporal worker (its
// native bridge and webpack) just because the worker command exists.
const commands: Record<string, () => Promise<void>> = {
  dev: async () => (await import('./cli/dev')).runDev(config),
  api: async () => (await import('./cli/api')).runApi(config),
  worker: async () => (await import('./cli/worker')).runWorker(config),
  migrate: async () => (await import('./cli/migrate')).runMigrate(config),
  admin: async () => (await import('./cli/admin')).runAdmin(config, args),
  events: async () => (await import('./cli/events')).runEvents(config, args),
  listen: async () => (await import('./cli/listen')).runListen(config, args),
  trigger: async () => (await import('./cli/trigger')).runTrigger(config, args),
  keys: async () => (await import('./cli/dev-state')).printSeededKeys(config.dataDir),
  provision: async () => (await import('./cli/provision')).runProvision(config, args),
  temporal: async () => (await import('./cli/temporal')).runTemporal(config, args),
  'bundle-workflows': async () => {
    const file = args.find((a) => !a.startsWith('--'));
    if (!file) throw new Error('usage: shiphook bundle-workflows FILE [--traced]');
    await (await import('./engine/bundle')).bundleWorkflows(file, { traced: args.includes('--traced') });
  },
};

/** The configuration; a refused setting is one line on stderr and exit 1, not a stack trace. */
function settings(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof SettingRefused)) throw err;
    process.stderr.write(`shiphook: ${err.message}\n`);
    process.exit(1);
  }
}

const run = command ? commands[command] : undefined;
if (!run) {
  const help = !command || command === '--help' || command === '-h' || command === 'help';
  (help ? process.stdout : process.stderr).write(USAGE);
  process.exit(help ? 0 : 2);
}
try {
  await run();
} catch (err) {
  process.stderr.write(`shiphook ${command}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
