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
