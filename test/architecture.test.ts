import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const CRUISER = path.resolve('node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const CONFIG = path.resolve('.dependency-cruiser.cjs');

/** The rules' violations in `baseDir`: the exit code is their number. */
async function cruise(baseDir: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [CRUISER, '--config', CONFIG, '--output-type', 'err', 'src', 'workflows', 'activities'], { cwd: baseDir });
    return { code: 0, output: stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('the import rules (.dependency-cruiser.cjs)', () => {
  it('hold for the whole code base: layers one way, the sandbox line, the launcher kept out of production, no cycles', async () => {
    const { code, output } = await cruise(process.cwd());
    expect(code, output).toBe(0);
    expect(output).toMatch(/no dependency violations found/);
  });

  const fixture = mkdtempSync(path.join(tmpdir(), 'shiphook-layers-'));
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  it('catch what they are there to catch', async () => {
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(fixture, file)), { recursive: true });
      writeFileSync(path.join(fixture, file), text);
    };
    cpSync('tsconfig.json', path.join(fixture, 'tsconfig.json'));
    write('src/engine/contract.ts', 'export interface Input { id: string }\n');
    write('activities/index.ts', "import { deliver } from '../workflows/deliver';\nexport const activities = { deliver };\n");
    write('workflows/deliver.ts', "import { activities } from '../activities/index';\nexport async function deliver(): Promise<unknown> { return activities; }\n");
    write('src/launcher/ports.ts', 'export const port = 1;\n');
    write('src/engine/worker.ts', "import { port } from '../launcher/ports';\nexport const worker = port;\n");
    write('src/webhooks/webhooks.ts', "import { worker } from '../engine/worker';\nexport const hook = worker;\n");

    const { code, output } = await cruise(fixture);
    expect(code).toBeGreaterThan(0);
    for (const rule of ['workflows-import-only-the-contract', 'activities-never-import-workflows', 'no-cycles', 'launcher-only-from-cli', 'resources-below-the-engine']) {
      expect(output).toContain(rule);
    }
  });
});
