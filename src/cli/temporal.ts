import { spawn } from 'node:child_process';
import type { Config } from '../config';
import { findTemporalCli } from '../launcher/temporal';
import { readDevState } from './dev-state';

/**
 * `shiphook temporal …`: the `temporal` CLI the project runs (TEMPORAL_CLI_PATH, PATH,
 * or the copy `npm install` provisioned), its arguments passed through, pointed at
 * TEMPORAL_ADDRESS, else the running `npm start`'s dev server, else the dev server's
 * default port. The address and namespace go in the CLI's own environment variables,
 * so `--address` / `--namespace` on the command line still win.
 */
export async function runTemporal(config: Config, args: string[]): Promise<void> {
  const cli = findTemporalCli(config.temporalCliPath);
  const env = { ...process.env, TEMPORAL_ADDRESS: temporalAddressFor(config), TEMPORAL_NAMESPACE: config.temporalNamespace };
  const child = spawn(cli, args, { stdio: 'inherit', env });
  // Ctrl-C reaches the CLI (same process group) and ends it; this process waits for its exit code.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  const code = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0)));
  });
  process.exit(code);
}

export function temporalAddressFor(config: Config): string {
  return config.temporalAddress ?? readDevState(config.dataDir)?.temporalAddress ?? `127.0.0.1:${config.devPorts.temporal}`;
}
