import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config';
import { createDb, type Db } from '../db/database';
import { migrateToLatest } from '../db/migrate';
import { createParentUser } from '../domain/users';
import { waitForPort } from '../launcher/free-port';
import { startInfrastructure } from '../launcher/infrastructure';
import { shiphookProcessEnv } from '../launcher/process-env';
import { stopChild } from '../launcher/temporal';
import { writeDevState } from './dev-state';

const CLI = fileURLToPath(new URL('../../bin/shiphook.mjs', import.meta.url));

/**
 * `shiphook dev` (= `npm start`): embedded PostgreSQL and Temporal dev server
 * unless DATABASE_URL / TEMPORAL_ADDRESS are set, migrations, a seeded parent user
 * on first start, then the worker and api as child processes. Ctrl-C stops all.
 */
export async function runDev(config: Config): Promise<void> {
  const started = Date.now();
  mkdirSync(config.dataDir, { recursive: true });
  const infra = await startInfrastructure({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    temporalAddress: config.temporalAddress,
    temporalCliPath: config.temporalCliPath,
    persistent: true,
    postgresPort: config.devPorts.postgres,
    temporalPort: config.devPorts.temporal,
    temporalUiPort: config.devPorts.temporalUi,
    ui: true,
  });
  const children: ChildProcess[] = [];
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await Promise.allSettled(children.map((c) => stopChild(c)));
    await infra.stop();
    process.exit(code);
  };
  const startChild = (command: string, env: NodeJS.ProcessEnv) => {
    const child = spawn(process.execPath, [CLI, command], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('exit', (code) => {
      if (stopping) return;
      process.stderr.write(`shiphook ${command} exited (${code}); stopping\n`);
      void stop(1);
    });
    children.push(child);
    return child;
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    const db = createDb(infra.databaseUrl, 2);
    await migrateToLatest(db);
    const adminToken = config.adminToken ?? adminTokenFrom(config.dataDir);
    const seeded = await seedFirstUser(db, config.dataDir);
    await db.destroy();
    writeDevState(config.dataDir, { databaseUrl: infra.databaseUrl, temporalAddress: infra.temporalAddress, pid: process.pid });

    const env = {
      ...shiphookProcessEnv(),
      DATABASE_URL: infra.databaseUrl,
      TEMPORAL_ADDRESS: infra.temporalAddress,
      SHIPHOOK_ADMIN_TOKEN: adminToken,
      SHIPHOOK_ALLOW_INSECURE_WEBHOOKS: process.env.SHIPHOOK_ALLOW_INSECURE_WEBHOOKS ?? 'true',
    };
    const workerReady = new Promise<number | undefined>((resolve) => {
      const worker = startChild('worker', env);
      worker.on('message', (m: { ready?: boolean; httpPort?: number }) => { if (m?.ready) resolve(m.httpPort); });
    });
    startChild('api', env);
    const [workerHttpPort] = await Promise.all([workerReady, waitForPort(config.port, config.host)]);

    const lines = [
      '',
      `shiphook is ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      `  API          http://${config.host}:${config.port}/v2`,
      `  Temporal UI  ${infra.temporalUiUrl ?? '(external Temporal at ' + infra.temporalAddress + ')'}`,
      `  Admin token  ${adminToken}   (Authorization: Bearer … on /admin/v1 and /metrics)`,
      `  Worker       http://${config.worker.httpHost}:${workerHttpPort}/metrics   (/healthz, /readyz; SHIPHOOK_WORKER_HTTP_PORT)`,
    ];
    if (seeded) {
      lines.push(
        `  Seeded user  developer@shiphook.local (${seeded.user.id})`,
        `    test key        ${seeded.api_keys[0]!.key}`,
        `    production key  ${seeded.api_keys[1]!.key}`,
        `    saved to ${path.join(config.dataDir, 'credentials.json')}`,
      );
    } else {
      lines.push(`  Credentials of the seeded user: ${path.join(config.dataDir, 'credentials.json')}`);
    }
    lines.push('  Ctrl-C stops everything; data stays in ' + config.dataDir, '');
    process.stdout.write(lines.join('\n') + '\n');
  } catch (err) {
    process.stderr.write(`shiphook dev: ${err instanceof Error ? err.message : String(err)}\n`);
    await stop(1);
  }
}

function adminTokenFrom(dataDir: string): string {
  const file = path.join(dataDir, 'admin-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const token = randomBytes(24).toString('hex');
  writeFileSync(file, token + '\n', { mode: 0o600 });
  return token;
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
