import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { cruise, type IConfiguration, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, describe, expect, it } from 'vitest';

const CONFIG = path.resolve('.dependency-cruiser.cjs');
const TSCONFIG = path.resolve('tsconfig.json');
const config = createRequire(import.meta.url)(CONFIG) as IConfiguration;
const RULES = (config.forbidden ?? []).map((rule) => rule.name ?? '(unnamed)');

/**
 * For each rule, a tree that breaks it. `modules`: each module and what it imports, as a
 * project path (created empty when the tree does not list it), a package or a built-in;
 * `type …` for a type-only import. `reports`: what the rule must report (`from → to`, or a
 * module by its path) and all that any rule may report; the tree's other imports are
 * allowed ones, so a rule that catches too much fails too.
 */
interface Fixture {
  modules: Record<string, string[]>;
  reports: string[];
}

const FIXTURES: Record<string, Fixture> = {
  'every-module-in-a-layer': {
    modules: {
      'src/subscriptions/subscriptions.ts': [],
      'src/rate-limits.ts': ['node:crypto'],
      'src/webhooks/webhooks.ts': ['src/notifications/events.ts', 'src/config.ts'],
    },
    reports: ['src/subscriptions/subscriptions.ts', 'src/rate-limits.ts', 'src/notifications/events.ts'],
  },
  'no-cycles': {
    modules: {
      'src/webhooks/webhooks.ts': ['src/webhooks/health.ts', 'src/webhooks/url.ts'],
      'src/webhooks/health.ts': ['type src/webhooks/webhooks.ts', 'src/webhooks/url.ts'],
    },
    // A cycle is reported once, at one of its imports.
    reports: ['src/webhooks/health.ts → src/webhooks/webhooks.ts'],
  },
  'workflows-import-only-the-contract': {
    modules: {
      'workflows/deliver-event.ts': [
        '@temporalio/workflow', '@temporalio/common', 'src/engine/contract.ts', 'workflows/retry.ts', 'type activities/index.ts',
        'activities/index.ts', 'src/events/status.ts', 'kysely', '@temporalio/client', 'node:crypto',
      ],
    },
    reports: [
      'workflows/deliver-event.ts → activities/index.ts', 'workflows/deliver-event.ts → src/events/status.ts',
      'workflows/deliver-event.ts → kysely', 'workflows/deliver-event.ts → @temporalio/client', 'workflows/deliver-event.ts → node:crypto',
    ],
  },
  'workflows-type-imports': {
    modules: {
      'workflows/deliver-event.ts': [
        'type activities/index.ts', 'type src/engine/contract.ts', 'type @temporalio/workflow', 'type workflows/retry.ts',
        'type activities/deliver.ts', 'type src/events/tables.ts', 'type kysely', 'type node:events',
      ],
    },
    reports: [
      'workflows/deliver-event.ts → activities/deliver.ts', 'workflows/deliver-event.ts → src/events/tables.ts',
      'workflows/deliver-event.ts → kysely', 'workflows/deliver-event.ts → node:events',
    ],
  },
  'contract-stands-alone': {
    modules: {
      'src/engine/contract.ts': ['@temporalio/workflow', '@temporalio/common', 'type src/events/tables.ts', 'node:crypto', 'src/ids.ts', 'type src/webhooks/webhooks.ts'],
    },
    reports: ['src/engine/contract.ts → node:crypto', 'src/engine/contract.ts → src/ids.ts', 'src/engine/contract.ts → src/webhooks/webhooks.ts'],
  },
  'activities-never-import-workflows': {
    modules: { 'activities/deliver.ts': ['src/engine/contract.ts', 'workflows/deliver-event.ts', 'type workflows/webhook-health.ts'] },
    reports: ['activities/deliver.ts → workflows/deliver-event.ts', 'activities/deliver.ts → workflows/webhook-health.ts'],
  },
  'activities-below-the-engine': {
    modules: {
      'activities/deliver.ts': [
        'src/engine/contract.ts', 'src/engine/signed-request.ts', 'src/events/deliveries.ts', 'src/outbound/http-client.ts',
        'src/engine/outbox.ts', 'type src/engine/client.ts',
      ],
    },
    reports: ['activities/deliver.ts → src/engine/outbox.ts', 'activities/deliver.ts → src/engine/client.ts'],
  },
  'activities-below-the-api': {
    modules: { 'activities/deliver.ts': ['src/webhooks/webhooks.ts', 'src/api/app.ts', 'type src/portal/router.ts'] },
    reports: ['activities/deliver.ts → src/api/app.ts', 'activities/deliver.ts → src/portal/router.ts'],
  },
  'launcher-only-from-cli': {
    modules: {
      'src/cli/dev.ts': ['src/launcher/postgres.ts'],
      'src/launcher/postgres.ts': ['src/launcher/ports.ts'],
      'src/engine/worker.ts': ['src/launcher/ports.ts'],
      'src/config.ts': ['type src/launcher/ports.ts'],
      'activities/index.ts': ['src/launcher/ports.ts'],
    },
    reports: [
      'src/engine/worker.ts → src/launcher/ports.ts', 'src/config.ts → src/launcher/ports.ts', 'activities/index.ts → src/launcher/ports.ts',
    ],
  },
  'nothing-imports-the-cli': {
    modules: {
      'src/cli.ts': ['src/cli/dev.ts'],
      'src/api/app.ts': ['src/cli/require-env.ts'],
      'src/launcher/temporal.ts': ['type src/cli.ts'],
    },
    reports: ['src/api/app.ts → src/cli/require-env.ts', 'src/launcher/temporal.ts → src/cli.ts'],
  },
  'engine-below-the-api': {
    modules: { 'src/engine/outbox.ts': ['src/events/publish.ts', 'src/api/app.ts', 'type src/portal/router.ts'] },
    reports: ['src/engine/outbox.ts → src/api/app.ts', 'src/engine/outbox.ts → src/portal/router.ts'],
  },
  'resources-below-the-engine': {
    modules: {
      'src/webhooks/operations.ts': ['src/engine/starters.ts', 'src/webhooks/webhooks.ts'],
      'src/webhooks/webhooks.ts': ['src/db/database.ts', 'src/engine/starters.ts', 'type src/engine/contract.ts', 'src/api/auth.ts'],
      'src/events/events.ts': ['type activities/index.ts'],
    },
    reports: [
      'src/webhooks/webhooks.ts → src/engine/starters.ts', 'src/webhooks/webhooks.ts → src/engine/contract.ts',
      'src/webhooks/webhooks.ts → src/api/auth.ts', 'src/events/events.ts → activities/index.ts',
    ],
  },
  'operations-below-the-api': {
    modules: { 'src/webhooks/operations.ts': ['src/operation.ts', 'src/webhooks/webhooks.schema.ts', 'src/api/router.ts', 'type src/portal/layout.ts'] },
    reports: ['src/webhooks/operations.ts → src/api/router.ts', 'src/webhooks/operations.ts → src/portal/layout.ts'],
  },
  'operations-start-work-through-the-engine': {
    modules: { 'src/webhooks/operations.ts': ['src/engine/starters.ts', 'workflows/deliver-event.ts', 'type activities/index.ts'] },
    reports: ['src/webhooks/operations.ts → workflows/deliver-event.ts', 'src/webhooks/operations.ts → activities/index.ts'],
  },
  'tables-are-leaves': {
    modules: { 'src/webhooks/tables.ts': ['type kysely', 'type src/account/tables.ts', 'zod', 'src/webhooks/url.ts', 'node:crypto'] },
    reports: ['src/webhooks/tables.ts → zod', 'src/webhooks/tables.ts → src/webhooks/url.ts', 'src/webhooks/tables.ts → node:crypto'],
  },
  'foundation-imports-nothing-above': {
    modules: {
      'src/db/database.ts': ['pg', 'kysely', 'type src/webhooks/tables.ts', 'src/errors/api-error.ts', 'src/webhooks/webhooks.ts', 'src/engine/client.ts'],
      'src/log.ts': ['type src/api/request-id.ts'],
      'src/outbound/http-client.ts': ['undici', 'activities/index.ts'],
    },
    reports: [
      'src/db/database.ts → src/webhooks/webhooks.ts', 'src/db/database.ts → src/engine/client.ts',
      'src/log.ts → src/api/request-id.ts', 'src/outbound/http-client.ts → activities/index.ts',
    ],
  },
  'customer-requests-through-outbound': {
    modules: {
      'src/outbound/http-client.ts': ['undici'],
      'src/cli/events.ts': ['undici'],
      'src/webhooks/test-events.ts': ['undici'],
      'src/engine/worker-http.ts': ['type undici'],
    },
    reports: ['src/webhooks/test-events.ts → undici', 'src/engine/worker-http.ts → undici'],
  },
  'temporal-worker-only-in-the-worker': {
    modules: {
      'src/engine/worker.ts': ['@temporalio/worker'],
      'src/engine/activity-log-ids.ts': ['type @temporalio/worker'],
      'src/launcher/temporal.ts': ['@temporalio/worker'],
      'src/engine/outbox.ts': ['@temporalio/worker'],
      'src/api/app.ts': ['type @temporalio/worker'],
    },
    reports: ['src/engine/outbox.ts → @temporalio/worker', 'src/api/app.ts → @temporalio/worker'],
  },
  'express-only-at-the-top': {
    modules: {
      'src/api/app.ts': ['express'],
      'src/portal/router.ts': ['type express'],
      'src/metrics/http.ts': ['type express'],
      'src/engine/worker-http.ts': ['express'],
    },
    reports: ['src/metrics/http.ts → express', 'src/engine/worker-http.ts → express'],
  },
};

const LOCAL = /^(src|workflows|activities)\//;

/** A module's text: it imports (and uses) each of `imports`. */
function moduleText(file: string, imports: string[]): string {
  const lines = imports.map((target, i) => {
    const typeOnly = target.startsWith('type ');
    const name = typeOnly ? target.slice('type '.length) : target;
    let specifier = name;
    if (LOCAL.test(name)) {
      specifier = path.posix.relative(path.posix.dirname(file), name.replace(/[.]ts$/, ''));
      if (!specifier.startsWith('.')) specifier = `./${specifier}`;
    }
    return typeOnly ? `import type * as t${i} from '${specifier}';\nexport type T${i} = typeof t${i};` : `import * as m${i} from '${specifier}';\nexport const v${i} = m${i};`;
  });
  return `${[...lines, 'export const here = true;'].join('\n')}\n`;
}

/** Writes `fixture`'s tree in `dir`, beside a link to the project's packages; returns the roots to cruise. */
function writeTree(dir: string, fixture: Fixture): string[] {
  const files = new Map<string, string>();
  for (const [file, imports] of Object.entries(fixture.modules)) {
    files.set(file, moduleText(file, imports));
    for (const target of imports) {
      const name = target.replace(/^type /, '');
      if (LOCAL.test(name) && !(name in fixture.modules)) files.set(name, moduleText(name, []));
    }
  }
  for (const [file, text] of files) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  symlinkSync(path.resolve('node_modules'), path.join(dir, 'node_modules'), 'dir');
  return [...new Set([...files.keys()].map((file) => file.split('/')[0] ?? file))];
}

/** A violation as a fixture names it: the module, or `from → to` with a package or built-in as imported. */
function reported(violation: IViolation): string {
  if (violation.type === 'module') return violation.from;
  const types = violation.dependencyTypes ?? [];
  let to = violation.to;
  if (types.includes('core')) to = `node:${violation.to}`;
  else if (!types.includes('local')) to = violation.unresolvedTo ?? violation.to;
  return `${violation.from} → ${to}`;
}

/** The rules' violations in the tree at `baseDir`, found in this process (a cruise of a small tree takes milliseconds). */
async function violations(baseDir: string, roots: string[]): Promise<IViolation[]> {
  const { output } = await cruise(
    roots,
    {
      ...config.options,
      ruleSet: config,
      validate: true,
      outputType: 'json',
      baseDir,
      tsConfig: { fileName: TSCONFIG },
      // The tree's node_modules is a link to the project's: its packages keep their node_modules/… paths.
      preserveSymlinks: true,
    },
    {},
    { tsConfig: extractTSConfig(TSCONFIG) },
  );
  return (JSON.parse(output as string) as ICruiseResult).summary.violations;
}

describe('the import rules (.dependency-cruiser.cjs)', () => {
  it('hold for the whole code base, as `npm run layers` checks it', async () => {
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    const [command, ...args] = (scripts.layers ?? '').split(/\s+/);
    expect(command).toBe('depcruise');
    const cruiser = path.resolve('node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
    const run = await promisify(execFile)(process.execPath, [cruiser, ...args, '--output-type', 'err']).catch((err: { stdout?: string; stderr?: string }) => err);
    expect(`${run.stdout ?? ''}${run.stderr ?? ''}`).toMatch(/no dependency violations found/);
  });

  it('each have a fixture that breaks them, and each fixture a rule', () => {
    expect(new Set(RULES).size, 'rule names are unique').toBe(RULES.length);
    expect(Object.keys(FIXTURES).sort()).toEqual([...RULES].sort());
  });

  const trees = mkdtempSync(path.join(tmpdir(), 'shiphook-layers-'));
  afterAll(() => rmSync(trees, { recursive: true, force: true }));

  it.each(RULES)('%s: reports what its fixture breaks, and no rule reports anything else', async (rule) => {
    const fixture = FIXTURES[rule];
    expect(fixture, `a fixture that breaks ${rule}`).toBeDefined();
    if (!fixture) return;
    const dir = path.join(trees, rule);
    const found = await violations(dir, writeTree(dir, fixture));
    expect(found.map((violation) => `${violation.rule.name}: ${reported(violation)}`).sort()).toEqual(fixture.reports.map((report) => `${rule}: ${report}`).sort());
  });
});
