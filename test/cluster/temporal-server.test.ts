import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchAttributes } from '../../src/engine/contract';
import { LaunchError } from '../../src/launcher/launch-error';
import { findTemporalCli } from '../../src/launcher/temporal';
import { listSearchAttributes } from '../../src/launcher/temporal-operator';
import { TEMPORAL_SERVER_VERSION, temporalServerBinaries, temporalServerCacheDir } from './temporal-server/binaries';
import { HISTORY_SHARDS } from './temporal-server/environment';
import { startTemporalServer, type TemporalServer } from './temporal-server/server';

const scratch = mkdtempSync(path.join(tmpdir(), 'shiphook-temporal-server-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * A folder with these executables in it: scripts that print what a binary of `version`
 * prints for `--version` (what matters is where they are, and that version).
 */
function folderWith(dir: string, names: string[], version = TEMPORAL_SERVER_VERSION): string {
  mkdirSync(dir, { recursive: true });
  for (const name of names) {
    writeFileSync(path.join(dir, name), `#!/bin/sh\necho "temporal version ${version}"\n`);
    chmodSync(path.join(dir, name), 0o755);
  }
  return dir;
}

describe('where the server binaries come from', () => {
  const noGo = { PATH: folderWith(path.join(scratch, 'path-without-go'), []) };

  it('without Go and without TEMPORAL_SERVER_PATH, says what to install or set', async () => {
    const failure = temporalServerBinaries({ env: noGo, toolsDir: path.join(scratch, 'empty-tools') });
    await expect(failure).rejects.toBeInstanceOf(LaunchError);
    await expect(failure).rejects.toThrow(/Go is needed[\s\S]*install Go[\s\S]*TEMPORAL_SERVER_PATH/);
  });

  it('uses the tool cache when the build is there (no Go needed)', async () => {
    const toolsDir = path.join(scratch, 'tools');
    const bin = folderWith(path.join(temporalServerCacheDir(toolsDir), 'bin'), ['temporal-server', 'temporal-sql-tool']);
    expect(temporalServerCacheDir(toolsDir)).toContain(`temporal-server-${TEMPORAL_SERVER_VERSION}`);
    await expect(temporalServerBinaries({ env: noGo, toolsDir })).resolves.toEqual({
      server: path.join(bin, 'temporal-server'),
      sqlTool: path.join(bin, 'temporal-sql-tool'),
    });
  });

  it('takes TEMPORAL_SERVER_PATH, with the schema tool beside it as `go install` names it', async () => {
    const bin = folderWith(path.join(scratch, 'go-bin'), ['server', 'sql']);
    const env = { ...noGo, TEMPORAL_SERVER_PATH: path.join(bin, 'server') };
    await expect(temporalServerBinaries({ env, toolsDir: path.join(scratch, 'empty-tools') })).resolves.toEqual({
      server: path.join(bin, 'server'),
      sqlTool: path.join(bin, 'sql'),
    });
  });

  it('refuses a TEMPORAL_SERVER_PATH of another version, naming both', async () => {
    const bin = folderWith(path.join(scratch, 'old-bin'), ['temporal-server', 'temporal-sql-tool'], '1.29.1');
    const env = { ...noGo, TEMPORAL_SERVER_PATH: path.join(bin, 'temporal-server') };
    const failure = temporalServerBinaries({ env, toolsDir: path.join(scratch, 'empty-tools') });
    await expect(failure).rejects.toBeInstanceOf(LaunchError);
    await expect(failure).rejects.toThrow(new RegExp(`v1\\.29\\.1; shiphook pins v${TEMPORAL_SERVER_VERSION.replaceAll('.', '\\.')}`));
  });

  it('says which variable to set when the schema tool is not beside TEMPORAL_SERVER_PATH', async () => {
    const bin = folderWith(path.join(scratch, 'lonely-bin'), ['temporal-server']);
    const env = { ...noGo, TEMPORAL_SERVER_PATH: path.join(bin, 'temporal-server') };
    await expect(temporalServerBinaries({ env, toolsDir: path.join(scratch, 'empty-tools') })).rejects.toThrow(/TEMPORAL_SQL_TOOL_PATH/);
  });

  it('builds with Go when the tool cache is empty, saying what and for how long before, while and after', async () => {
    // A stand-in for `go install`: it builds until the test has seen a progress line (or gives up
    // waiting for one, so that a build that says nothing fails below), then leaves both commands in GOBIN.
    const done = path.join(scratch, 'go-may-finish');
    const fakeGo = path.join(scratch, 'fake-go');
    mkdirSync(fakeGo);
    writeFileSync(path.join(fakeGo, 'go'), `#!/bin/sh\ni=0\nwhile [ ! -e "${done}" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done\ntouch "$GOBIN/server" "$GOBIN/sql"\n`);
    chmodSync(path.join(fakeGo, 'go'), 0o755);
    const toolsDir = path.join(scratch, 'tools-to-build');
    const lines: string[] = [];
    const progress = { everyMs: 50, say: (line: string) => { lines.push(line); if (/still building/.test(line)) writeFileSync(done, ''); } };

    const built = await temporalServerBinaries({ env: { PATH: `${fakeGo}${path.delimiter}${process.env.PATH}` }, toolsDir, progress });

    const bin = path.join(temporalServerCacheDir(toolsDir), 'bin');
    expect(built).toEqual({ server: path.join(bin, 'temporal-server'), sqlTool: path.join(bin, 'temporal-sql-tool') });
    expect(lines[0]).toMatch(new RegExp(`building the Temporal server v${TEMPORAL_SERVER_VERSION.replaceAll('.', '\\.')} from Go sources once .*, into .*temporal-server-${TEMPORAL_SERVER_VERSION}; this takes about \\d+ minutes on 2 cores`));
    expect(lines.slice(1, -1).length).toBeGreaterThan(0);
    for (const line of lines.slice(1, -1)) expect(line).toMatch(/still building the Temporal server: \d+ s so far/);
    expect(lines.at(-1)).toMatch(/built the Temporal server in \d+ s$/);
    // Nothing more once it is built, and nothing left of the staging folder.
    const said = lines.length;
    await expect(temporalServerBinaries({ env: noGo, toolsDir, progress })).resolves.toEqual(built);
    expect(lines).toHaveLength(said);
    expect(readdirSync(toolsDir)).toEqual([path.basename(temporalServerCacheDir(toolsDir))]);
  });
});

describe('a real Temporal server on its own PostgreSQL', () => {
  let server: TemporalServer;
  let connection: Connection;
  const cli = findTemporalCli(process.env.TEMPORAL_CLI_PATH);

  // The binaries are there: the suite's global setup built them, if it had to, before any file.
  beforeAll(async () => {
    server = await startTemporalServer({ dataDir: path.join(scratch, 'server'), cliPath: cli, namespaceRetentionMs: 24 * 3600_000 });
    connection = await Connection.connect({ address: server.address });
  });
  afterAll(async () => {
    await connection?.close();
    await server?.stop();
  }, 60_000);

  async function namespaceAndAttributes() {
    const described = await connection.workflowService.describeNamespace({ namespace: 'default' });
    return { retentionS: Number(described.config?.workflowExecutionRetentionTtl?.seconds), attributes: await listSearchAttributes(cli, server.address) };
  }
  const contractAttributes = Object.fromEntries(searchAttributes.map((a) => [a.name, a.type]));

  it(`has ${HISTORY_SHARDS} history shards, the namespace default and every search attribute of the contract`, async () => {
    const info = await connection.workflowService.getClusterInfo({});
    expect(info.historyShardCount).toBe(HISTORY_SHARDS);
    expect(info.persistenceStore).toMatch(/postgres/);
    const { retentionS, attributes } = await namespaceAndAttributes();
    expect(retentionS).toBe(24 * 3600);
    expect(attributes).toMatchObject(contractAttributes);
  });

  it('killed and started again on its database, keeps its namespace and search attributes', async () => {
    const before = server.pid!;
    await server.kill('SIGKILL');
    expect(() => process.kill(before, 0)).toThrow();
    await server.start();
    expect(server.pid).not.toBe(before);
    const { retentionS, attributes } = await namespaceAndAttributes();
    expect(retentionS).toBe(24 * 3600);
    expect(attributes).toMatchObject(contractAttributes);
    // kill() was asked for: not a death.
    await expect(Promise.race([server.died, Promise.resolve('alive')])).resolves.toBe('alive');
  });

  it('reports a death nobody asked for, and starts again after it', async () => {
    process.kill(server.pid!, 'SIGKILL');
    await expect(server.died).resolves.toMatch(/the Temporal server exited \(SIGKILL\)/);
    await server.start();
    expect((await connection.workflowService.getClusterInfo({})).historyShardCount).toBe(HISTORY_SHARDS);
  });
});
