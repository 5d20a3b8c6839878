import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import { temporalLogger } from './runtime';

const WORKFLOWS = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));
const CONTRACT = fileURLToPath(new URL('./contract.ts', import.meta.url));

/**
 * Modules evaluated once in the worker's reusable V8 context and shared, frozen, by every
 * workflow run, instead of once per run: each cached run then holds fewer module instances
 * (docs/performance.md, "Memory"). Only modules without per-run state belong here: the SDK's
 * API (its state lives in the run's activator) and the engine's contract (signal and
 * search-attribute definitions, constants). Not workflows/: what a run's own module scope
 * does is its business.
 */
const SHARED_MODULES = ['@temporalio/workflow', CONTRACT];
const CLI = fileURLToPath(new URL('../../bin/shiphook.mjs', import.meta.url));

/** Bundles workflows/ for the Temporal worker's sandbox (webpack) into `outPath`. */
export async function bundleWorkflows(outPath: string): Promise<void> {
  // webpack's report is INFO: only warnings and errors reach the log, as JSON lines.
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS,
    preloadModules: SHARED_MODULES,
    logger: temporalLogger('WARN'),
  });
  writeFileSync(outPath, code);
}

/**
 * The workflow bundle a worker loads: `prebuilt` (SHIPHOOK_WORKFLOW_BUNDLE, e.g.
 * built into a container image with `shiphook bundle-workflows`), or one built
 * now by a short-lived child process. Never bundled inside the worker itself:
 * webpack leaves much of its memory behind in the process that ran it.
 */
export async function workflowBundle(prebuilt: string | undefined): Promise<{ code: string } | { codePath: string }> {
  if (prebuilt) return { codePath: prebuilt };
  const dir = mkdtempSync(path.join(tmpdir(), 'shiphook-workflows-'));
  const out = path.join(dir, 'workflow-bundle.js');
  try {
    await promisify(execFile)(process.execPath, [CLI, 'bundle-workflows', out], { maxBuffer: 16 * 1024 * 1024 });
    return { code: readFileSync(out, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
