import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Where a running `shiphook dev` publishes its service addresses for operator commands. */
export interface DevState {
  databaseUrl: string;
  temporalAddress: string;
  pid: number;
}

const file = (dataDir: string) => path.join(dataDir, 'dev.json');

export function writeDevState(dataDir: string, state: DevState): void {
  writeFileSync(file(dataDir), JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
}

export function readDevState(dataDir: string): DevState | undefined {
  if (!existsSync(file(dataDir))) return undefined;
  const state = JSON.parse(readFileSync(file(dataDir), 'utf8')) as DevState;
  try {
    process.kill(state.pid, 0);
    return state;
  } catch {
    return undefined;
  }
}

/** The key of `mode` of the user `npm start` seeded (in the data dir's credentials.json), if there is one. */
export function seededKey(dataDir: string, mode: 'test' | 'production'): string | undefined {
  const file = path.join(dataDir, 'credentials.json');
  if (!existsSync(file)) return undefined;
  const { api_keys: keys } = JSON.parse(readFileSync(file, 'utf8')) as { api_keys: { mode: string; key: string }[] };
  return keys.find((k) => k.mode === mode)?.key;
}

/** `shiphook keys`: the seeded user's keys as shell assignments (`eval "$(npx shiphook keys)"`). */
export function printSeededKeys(dataDir: string): void {
  const file = path.join(dataDir, 'credentials.json');
  if (!existsSync(file)) throw new Error(`no seeded credentials in ${file}: run \`npm start\` once first`);
  process.stdout.write(`export TEST_KEY=${seededKey(dataDir, 'test') ?? ''}\nexport PROD_KEY=${seededKey(dataDir, 'production') ?? ''}\n`);
}
