import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import { log } from '../log';
import { temporalLogger } from './runtime';
import { tracedBundlePath } from './worker-tracing';

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
/**
 * What a worker that exports traces adds to its workflows: the trace of a delivery's start
 * handed on to its activities (workflows/trace-context.ts). A bundle without it costs
 * nothing of tracing (src/telemetry/sdk.ts).
 */
const TRACE_CONTEXT = fileURLToPath(new URL('../../workflows/trace-context.ts', import.meta.url));

/** Bundles workflows/ for the Temporal worker's sandbox (webpack) into `outPath`; `traced`: handing a delivery's trace on to its activities. */
export async function bundleWorkflows(outPath: string, opts: { traced?: boolean } = {}): Promise<void> {
  // webpack's report is INFO: only warnings and errors reach the log, as JSON lines.
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS,
    preloadModules: SHARED_MODULES,
    workflowInterceptorModules: opts.traced ? [TRACE_CONTEXT] : [],
    logger: temporalLogger('WARN'),
  });
  writeFileSync(outPath, code);
}

/**
 * The workflow bundle a worker loads: `prebuilt` (SHIPHOOK_WORKFLOW_BUNDLE, e.g.
 * built into a container image with `shiphook bundle-workflows`; `traced`: its traced
 * sibling), or one built now by a short-lived child process. Never bundled inside the worker itself:
 * webpack leaves much of its memory behind in the process that ran it.
 */
export async function workflowBundle(prebuilt: string | undefined, opts: { traced?: boolean } = {}): Promise<{ code: string } | { codePath: string }> {
  if (prebuilt && !opts.traced) return { codePath: prebuilt };
  if (prebuilt) {
    // A tracing worker takes the traced bundle beside the prebuilt one (the image has both).
    const traced = tracedBundlePath(prebuilt);
    if (existsSync(traced)) return { codePath: traced };
    log.info('no traced workflow bundle beside SHIPHOOK_WORKFLOW_BUNDLE: building one now', { expected: traced });
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'shiphook-workflows-'));
  const out = path.join(dir, 'workflow-bundle.js');
  try {
    await promisify(execFile)(process.execPath, [CLI, 'bundle-workflows', out, ...(opts.traced ? ['--traced'] : [])], { maxBuffer: 16 * 1024 * 1024 });
    return { code: readFileSync(out, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
