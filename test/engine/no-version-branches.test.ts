import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Before 1.0 no deployment holds runs of older code, so workflows/ keeps no version
 * branch: a workflow change re-records the replay baseline instead
 * (test/engine/workflow-replay.test.ts, docs/operations.md "Changing workflow code").
 * From 1.0 on, `patched()` is how a change keeps runs in flight on their path.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORKFLOWS = path.join(ROOT, 'workflows');
const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };

/** `patched(` and `deprecatePatch(` calls (or mentions) in some source, as `name:line: text`. */
function versionBranches(name: string, source: string): string[] {
  return source.split('\n').flatMap((line, i) => (/\b(patched|deprecatePatch)\s*\(/.test(line) ? [`${name}:${i + 1}: ${line.trim()}`] : []));
}

describe('version branches in workflow code', () => {
  it('are found wherever they are written', () => {
    expect(versionBranches('a.ts', "if (patched('x')) {}\nwf.deprecatePatch ('y');\nconst unpatched = (f) => f;\n// patched is a word")).toEqual([
      "a.ts:1: if (patched('x')) {}",
      "a.ts:2: wf.deprecatePatch ('y');",
    ]);
  });

  it.runIf(Number(version.split('.')[0]) < 1)(`are none in workflows/ while the package is below 1.0 (it is ${version})`, () => {
    const files = readdirSync(WORKFLOWS, { recursive: true, encoding: 'utf8' }).filter((f) => /\.[cm]?[jt]s$/.test(f));
    expect(files.length).toBeGreaterThan(0);
    expect(files.flatMap((f) => versionBranches(f, readFileSync(path.join(WORKFLOWS, f), 'utf8')))).toEqual([]);
  });
});
