import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DYNAMIC_CONFIG_FILE, HISTORY_SHARDS, isSetting, ROLE_ENV, SEARCH_ATTRIBUTES, SERVICES, type ServiceName, serviceEnv, type SharedEnv, SHARED_ENV_NAMES } from '../cluster/topology';
import { temporalServerEnv } from '../cluster/temporal-server/environment';

/**
 * docker-compose.yml and the cluster test (`npm run test:cluster`, test/cluster/topology.ts)
 * describe the same production topology: this fails when one changes and the other does not.
 */

interface Service {
  build?: unknown;
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string>;
  mem_limit?: string;
  volumes?: string[];
}

// Merge keys (`<<: *shiphook-env`) resolved as compose resolves them.
const compose = () => parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as { 'x-shiphook-env': Record<string, string>; services: Record<string, Service> };

const withoutTracing = (env: Record<string, string>) => Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('OTEL_')));

describe('docker-compose.yml and the cluster test', () => {
  it("run the same shiphook services: each role's command and worker role", () => {
    const { services } = compose();
    // The services built from this repository are shiphook's.
    const shiphook = Object.keys(services).filter((name) => services[name]!.build !== undefined).sort();
    expect(shiphook).toEqual(Object.keys(SERVICES).sort());
    for (const [name, spec] of Object.entries(SERVICES)) {
      expect(services[name]!.command, name).toEqual([spec.command]);
      expect(services[name]!.environment?.[ROLE_ENV], name).toBe('role' in spec ? spec.role : undefined);
    }
  });

  it('hold each shiphook service to the memory limit the cluster test measures its processes against', () => {
    const { services } = compose();
    for (const [name, spec] of Object.entries(SERVICES)) expect(services[name]!.mem_limit, name).toBe(spec.memLimit);
  });

  it('give every shiphook service the same environment variable names', () => {
    const { services: all, 'x-shiphook-env': everything } = compose();
    // Compose's OTEL_* point its processes at its trace backend, which (like Prometheus) the
    // cluster test does not run: compose.test.ts holds them to it.
    const shared = withoutTracing(everything);
    const services = Object.fromEntries(Object.entries(all).map(([name, s]) => [name, { ...s, ...(s.environment ? { environment: withoutTracing(s.environment) } : {}) }]));
    expect(Object.keys(shared).sort()).toEqual([...SHARED_ENV_NAMES].sort());
    const values = Object.fromEntries(SHARED_ENV_NAMES.map((n) => [n, `cluster's ${n}`])) as SharedEnv;
    // A developer's shell: its own settings must not reach the cluster's processes.
    const parent = { PATH: '/usr/bin', SHIPHOOK_RETRY_DELAYS: '1h', TEMPORAL_ADDRESS: 'elsewhere:7233', LOG_LEVEL: 'trace' };
    for (const [name, spec] of Object.entries(SERVICES)) {
      const names = Object.keys(services[name]!.environment ?? {}).sort();
      expect(names, name).toEqual([...SHARED_ENV_NAMES, ...('role' in spec ? [ROLE_ENV] : [])].sort());
      if (name === 'migrate') continue;
      // What the cluster test starts the service with, beside its own timings (`extra`).
      const env = serviceEnv(name as Exclude<ServiceName, 'migrate'>, values, {}, parent);
      expect(Object.keys(env).filter(isSetting).sort(), name).toEqual(names);
      expect(env.TEMPORAL_ADDRESS).toBe("cluster's TEMPORAL_ADDRESS");
      expect(env.PATH).toBe('/usr/bin');
    }
  });

  it("run the Temporal server with the same dynamic config file and as many history shards", () => {
    const { services } = compose();
    const temporal = services.temporal!;
    const env = temporal.environment ?? {};
    // The file the server is told to read, found on the host through the folder mounted there.
    const inContainer = path.posix.join('/etc/temporal', env.DYNAMIC_CONFIG_FILE_PATH ?? '');
    const mount = (temporal.volumes ?? []).map((v) => v.split(':')).find(([, target]) => target && inContainer.startsWith(`${target}/`));
    expect(mount, `a volume holding ${inContainer}`).toBeDefined();
    const onHost = path.normalize(path.join(mount![0]!, path.posix.relative(mount![1]!, inContainer)));
    expect(path.resolve(onHost)).toBe(path.resolve(DYNAMIC_CONFIG_FILE));
    expect(existsSync(DYNAMIC_CONFIG_FILE)).toBe(true);
    expect(Number(env.NUM_HISTORY_SHARDS)).toBe(HISTORY_SHARDS);
  });

  it('configure the Temporal server with the same variables: persistence, shards, dynamic config', () => {
    const composeEnv = compose().services.temporal!.environment ?? {};
    const ports = { frontend: 1, frontendHttp: 2, frontendMembership: 3, history: 4, historyMembership: 5, matching: 6, matchingMembership: 7, worker: 8, workerMembership: 9 };
    const launcherEnv = temporalServerEnv({ url: 'postgres://temporal:temporal@127.0.0.1:5432/postgres', port: 5432 }, ports);
    // What differs by design: this machine's ports, interface and log level, and the process's own PATH and HOME.
    const local = /^(PATH|HOME|LOG_LEVEL|BIND_ON_IP|PROMETHEUS_ENDPOINT|\w+_(GRPC|HTTP|MEMBERSHIP)_PORT)$/;
    const names = (env: Record<string, unknown>) => Object.keys(env).filter((n) => !local.test(n)).sort();
    expect(names(composeEnv)).toEqual(names(launcherEnv));
    expect(composeEnv.DB).toBe(launcherEnv.DB);
  });

  it("register the same search attributes, those of src/engine/contract.ts", () => {
    const { services } = compose();
    const script = [services['temporal-search-attributes']!.command].flat().join('\n');
    const registered: { name: string; type: string }[] = [];
    // `for a in A B C; do … --name $$a --type Keyword …; done`
    for (const loop of script.matchAll(/for (\w+) in ([\w ]+?);\s*do([\s\S]*?)done/g)) {
      const type = new RegExp(`--name \\$\\$${loop[1]} --type (\\w+)`).exec(loop[3]!)?.[1];
      for (const name of loop[2]!.trim().split(/\s+/)) registered.push({ name, type: type ?? '(none)' });
    }
    // `… --name ShiphookWebhookUrls --type KeywordList`
    for (const one of script.matchAll(/--name (\w+) --type (\w+)/g)) registered.push({ name: one[1]!, type: one[2]! });
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect(registered.sort(byName)).toEqual([...SEARCH_ATTRIBUTES].sort(byName));
  });
});
