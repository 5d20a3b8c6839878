import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tracedBundlePath } from '../../src/engine/worker-tracing';
import { bundledSources, workflowBundleFile } from './workflow-bundle';

describe("the suite's shared workflow bundle", () => {
  it('is named after every project file it holds: a change to any of them builds a new one', async () => {
    const file = await workflowBundleFile({ traced: true }); // the global setup's: already built
    const sources = bundledSources();
    for (const bundle of [file, tracedBundlePath(file)]) {
      // webpack names each module it took in by its path from the project's root.
      const modules = [...new Set([...readFileSync(bundle, 'utf8').matchAll(/"\.\/((?!node_modules\/)[\w./-]+\.ts)"/g)].map((m) => m[1]!))];
      expect(modules).toContain('workflows/deliver-event.ts');
      expect(modules.filter((m) => !sources.includes(m))).toEqual([]);
    }
  });

  it('follows value imports at any depth, and not type-only ones, which leave nothing in the bundle', () => {
    const sources = bundledSources();
    expect(sources).toContain('src/engine/contract.ts'); // imported by workflows/deliver-event.ts
    expect(sources).not.toContain('activities/index.ts'); // import type { Activities }
  });
});
