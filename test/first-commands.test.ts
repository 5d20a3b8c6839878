import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const exec = promisify(execFile);

/** A new user's first commands (`npm install`, `npm test`) print no warnings. */
describe('the first commands', () => {
  it('leave no dependency install script unreviewed (npm install would warn): each is allowed or denied in package.json', async () => {
    const { stdout, stderr } = await exec('npm', ['install-scripts', 'ls'], { timeout: 60_000 });
    expect(`${stdout}${stderr}`.trim()).toBe('No packages with unreviewed install scripts.');
  });

  it('give vitest configs whose relative imports name their file (Vite warns about an import without an extension)', () => {
    for (const file of ['vitest.config.ts', 'vitest.cluster.config.ts']) {
      const imports = [...readFileSync(file, 'utf8').matchAll(/from\s+['"](\.[^'"]*)['"]/g)].map((m) => m[1]!);
      expect(imports.filter((i) => !/\.[cm]?[jt]s$/.test(i)), file).toEqual([]);
    }
  });
});
