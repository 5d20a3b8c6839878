import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { tracedBundlePath } from '../../src/engine/worker-tracing';

const CLI = path.resolve('bin/shiphook.mjs');
const exec = promisify(execFile);

/** What webpack starts from (src/engine/bundle.ts): the workflows, the traced bundle's interceptor, the preloaded contract. */
const ENTRIES = ['workflows/index.ts', 'workflows/trace-context.ts', 'src/engine/contract.ts'];
/** What else decides the bundle: how it is built, and the packages it takes in (versions and patches). */
const BUILT_WITH = ['src/engine/bundle.ts', 'package-lock.json', 'tsconfig.json', ...readdirSync('patches').sort().map((f) => `patches/${f}`)];

const built = new Map<string, Promise<void>>();

/**
 * The workers' workflow bundle, built once per content of what it is made from and shared by
 * every test file's worker processes and the suite's worker (a worker started without one
 * builds it itself with webpack, the costliest part of its start). With `traced`, the traced
 * bundle beside it too, which a worker exporting traces loads (src/engine/bundle.ts).
 *
 * Never stale: its name is a hash of every project file the entries import, transitively, and
 * of BUILT_WITH. Safe at once: each build writes a file of its own and renames it into place.
 */
export async function workflowBundleFile(opts: { traced?: boolean } = {}): Promise<string> {
  const hash = createHash('sha256');
  for (const file of [...bundledSources(), ...BUILT_WITH]) hash.update(file).update('\0').update(readFileSync(file)).update('\0');
  const file = path.join(tmpdir(), `shiphook-test-bundle-${hash.digest('hex').slice(0, 16)}.js`);
  await Promise.all([build(file, false), ...(opts.traced ? [build(tracedBundlePath(file), true)] : [])]);
  return file;
}

function build(out: string, traced: boolean): Promise<void> {
  if (existsSync(out)) return Promise.resolve();
  let building = built.get(out);
  if (!building) {
    const partial = `${out}.${process.pid}.tmp`;
    building = exec(process.execPath, [CLI, 'bundle-workflows', partial, ...(traced ? ['--traced'] : [])])
      .then(() => renameSync(partial, out)) // atomic: a concurrent reader sees the whole bundle or none
      .finally(() => {
        rmSync(partial, { force: true });
        built.delete(out);
      });
    built.set(out, building);
  }
  return building;
}

/** ENTRIES and every project file they import, at any depth, sorted (type-only imports leave nothing in the bundle). */
export function bundledSources(): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    const specifiers = text.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/gm);
    for (const m of specifiers) visit(resolveImport(path.dirname(file), m[1] ?? m[2]!, file));
  };
  ENTRIES.forEach(visit);
  return [...seen].sort();
}

function resolveImport(dir: string, specifier: string, from: string): string {
  const base = path.join(dir, specifier);
  for (const candidate of [base, `${base}.ts`, base.replace(/\.js$/, '.ts'), path.join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  throw new Error(`workflow bundle: cannot resolve '${specifier}' imported by ${from}`);
}
