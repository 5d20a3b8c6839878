import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/**
 * A real headless Chromium for browser tests, driven by playwright-core (which
 * never downloads a browser: it is given Debian's `chromium`). `CHROMIUM_PATH`
 * names another binary. Missing, and running as root with apt-get, it installs
 * Debian's `chromium` once; otherwise it fails with a message that names the fix.
 */
const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export interface TestBrowser {
  /** One browser with a fresh profile (its own user-data-dir, removed by `close`). */
  context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

export function chromiumPath(): string {
  const wanted = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (executable(wanted)) return wanted;
  if (!process.env.CHROMIUM_PATH && process.getuid?.() === 0 && executable('/usr/bin/apt-get')) {
    process.stderr.write('shiphook tests: installing Debian package chromium for the browser tests (once)…\n');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const update = spawnSync('apt-get', ['update', '-qq'], { encoding: 'utf8', env });
    const install = update.status === 0 ? spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], { encoding: 'utf8', env }) : update;
    if (install.status === 0 && executable(wanted)) return wanted;
    throw new Error(`could not install chromium with apt-get:\n${(install.stderr || install.stdout).trim().split('\n').slice(-3).join('\n')}`);
  }
  throw new Error(
    `The browser tests need Chromium at ${wanted}. Install it (Debian/Ubuntu: sudo apt-get install chromium), ` +
      'or set CHROMIUM_PATH to a Chromium or Chrome binary.',
  );
}

export async function launchBrowser(): Promise<TestBrowser> {
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'shiphook-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath: chromiumPath(), args: FLAGS, headless: true });
  return {
    context,
    newPage: () => context.newPage(),
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
