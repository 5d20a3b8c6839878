import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/launcher/postgres';

const root = mkdtempSync(path.join(tmpdir(), 'shiphook-pg-'));
const moved: string[] = [];
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  for (const dir of moved) rmSync(dir, { recursive: true, force: true });
});

async function query(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

it('runs from a folder its service user cannot enter, and keeps its data across a stop and a start', async () => {
  // A home directory only its owner may enter, as /root is.
  const closed = path.join(root, 'home');
  mkdirSync(closed, { mode: 0o700 });
  const wanted = path.join(closed, 'clone', '.data');

  const first = await startEmbeddedPostgres(wanted, { persistent: true });
  if (process.getuid?.() === 0) {
    // PostgreSQL runs as user postgres here, who cannot pass through `closed`.
    expect(first.dataDir.startsWith('/var/lib/shiphook/')).toBe(true);
    moved.push(first.dataDir);
  } else {
    expect(first.dataDir).toBe(path.join(wanted, 'postgres'));
  }
  await query(first.url, 'create table kept (n int); insert into kept values (42)');
  await first.stop();

  const second = await startEmbeddedPostgres(wanted, { persistent: true, port: first.port });
  try {
    expect(second.dataDir).toBe(first.dataDir);
    expect(await query(second.url, 'select n from kept')).toEqual([{ n: 42 }]);
  } finally {
    await second.stop();
  }
}, 120_000);
