import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import { createDb, type Db } from '../db/database';
import { findActiveKey } from '../account/api-keys';
import { createPortalSession } from '../portal-sessions/portal-sessions';
import { keyDigest } from '../account/secrets';
import { createParentUser } from '../account/user-creation';
import { assertPortsFree } from '../launcher/ports';
import { type ShiphookSystem, startSystem } from '../launcher/system';
import { writeDevState } from './dev-state';
import { devWebhookEnv } from './dev-webhooks';

/** A child that dies is restarted with backoff; this many deaths within a minute stop everything. */
const RESTART = { maxCrashes: 5, windowMs: 60_000 };

/**
 * `shiphook dev` (= `npm start`): embedded PostgreSQL and Temporal dev server
 * unless DATABASE_URL / TEMPORAL_ADDRESS are set, migrations, a seeded parent user
 * on first start, then the worker and api as child processes, restarted if they
 * die. Ctrl-C stops everything (api and worker first, the services last) and exits 0.
 */
export async function runDev(config: Config): Promise<void> {
  mkdirSync(config.dataDir, { recursive: true });
  let stopping: Promise<never> | undefined;
  let starting: Promise<ShiphookSystem> | undefined;
  const stop = (code: number, why?: string) =>
    (stopping ??= (async () => {
      if (why) process.stderr.write(`shiphook dev: ${why}; stopping everything\n`);
      // Stopped while starting: what started is stopped as soon as the start settles.
      await (await starting?.catch(() => undefined))?.stop();
      process.exit(code);
    })());
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  const adminToken = config.adminToken ?? adminTokenFrom(config.dataDir);
  if (config.worker.httpPort) await assertPortsFree([{ port: config.worker.httpPort, host: config.worker.httpHost, name: "the worker's HTTP listener", variable: 'SHIPHOOK_WORKER_HTTP_PORT' }]);
  starting = startSystem({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    temporalAddress: config.temporalAddress,
    temporalCliPath: config.temporalCliPath,
    persistent: true,
    postgresPort: config.devPorts.postgres,
    temporalPort: config.devPorts.temporal,
    temporalUiPort: config.devPorts.temporalUi,
    // Closed delivery histories stay in the UI as long as their events stay in the API.
    temporalNamespaceRetentionMs: config.eventRetentionMs,
    ui: true,
    env: {
      SHIPHOOK_ADMIN_TOKEN: adminToken,
      ...devWebhookEnv(config.host, process.env),
    },
    api: { host: config.host, port: config.port },
    workers: [{ label: 'worker', role: config.worker.role }],
    restart: RESTART,
    onChildDied: (reason) => void stop(1, reason),
  });
  const system = await starting;
  if (stopping) return; // Ctrl-C while starting

  const db = createDb(system.databaseUrl, 1);
  const credentials = path.join(config.dataDir, 'credentials.json');
  const seeded = await seedFirstUser(db, config.dataDir);
  const portal = await seededPortalLink(db, config, credentials);
  await db.destroy();
  writeDevState(config.dataDir, { databaseUrl: system.databaseUrl, temporalAddress: system.temporalAddress, pid: process.pid });

  const lines = [
    '',
    // Counted from the start of the process, as the user waits: tsx's load included.
    `shiphook is ready in ${process.uptime().toFixed(1)} s`,
    `  API          http://${config.host}:${config.port}/v2`,
    `  Temporal UI  ${system.temporalUiUrl ?? '(external Temporal at ' + system.temporalAddress + ')'}`,
    `  Admin token  ${adminToken}   (Authorization: Bearer … on /admin/v1 and /metrics)`,
    `  Worker       http://${config.worker.httpHost}:${(await system.workers[0]!.ready).httpPort}/metrics   (/healthz, /readyz; SHIPHOOK_WORKER_HTTP_PORT)`,
  ];
  if (seeded) {
    lines.push(
      `  Seeded user  developer@shiphook.local (${seeded.user.id})`,
      `    test key        ${seeded.api_keys[0]!.key}`,
      `    production key  ${seeded.api_keys[1]!.key}`,
    );
  }
  if (portal) lines.push(`  Portal       ${portal.url}   (test mode, valid until ${portal.expires_at})`);
  lines.push(
    `  Credentials  ${credentials}  (in a shell: eval "$(npx shiphook keys)" sets TEST_KEY and PROD_KEY)`,
    `  Ctrl-C stops everything; the data stays in ${config.dataDir}`,
    '',
  );
  process.stdout.write(lines.join('\n') + '\n');
}

function adminTokenFrom(dataDir: string): string {
  const file = path.join(dataDir, 'admin-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const token = randomBytes(24).toString('hex');
  writeFileSync(file, token + '\n', { mode: 0o600 });
  return token;
}

/** A webhook portal link for the seeded user's test key (a new one at every start: links expire). */
async function seededPortalLink(db: Db, config: Config, credentials: string) {
  if (!existsSync(credentials)) return undefined;
  const { api_keys: keys } = JSON.parse(readFileSync(credentials, 'utf8')) as { api_keys: { mode: string; key: string }[] };
  const key = keys.find((k) => k.mode === 'test')?.key;
  const who = key ? await findActiveKey(db, keyDigest(key)) : undefined;
  return who ? createPortalSession(db, config, who, config.publicUrl ?? `http://${config.host}:${config.port}`) : undefined;
}

/** On first start (no users yet) create a parent user with keys and save them. */
async function seedFirstUser(db: Db, dataDir: string) {
  const any = await db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  if (any) return undefined;
  const result = await createParentUser(db, {
    name: 'Developer',
    email: 'developer@shiphook.local',
    referral_customer: true,
    end_shipper_enabled: true,
    balance: '100',
  });
  writeFileSync(path.join(dataDir, 'credentials.json'), JSON.stringify(result, null, 2) + '\n', { mode: 0o600 });
  return result;
}
