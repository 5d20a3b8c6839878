import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { log } from '../log';

/**
 * What the Temporal SDK's workflow sandbox does on every call into a workflow, and
 * what shiphook turns off (patches/@temporalio+worker+*.patch, applied by
 * `npm install` through patch-package; what it saves: docs/performance.md):
 *
 * - Deadlock detection: the SDK passes a 5 s `timeout` to every `vm` call into a
 *   workflow, and Node enforces a `vm` timeout by creating and joining a watchdog
 *   thread per call (several calls per workflow task). The patch
 *   lets 0 mean "no timeout". A delivery workflow is a few lines of our own code
 *   with no loop over anything unbounded; should one ever spin, the server's
 *   10 s workflow-task timeout still shows it in the UI.
 * - Stack traces: a promise hook takes a source-mapped stack trace of every
 *   Promise a workflow creates, for the `__stack_trace` query (the UI's "Stack
 *   Trace" tab). The patch lets TEMPORAL_WORKFLOW_STACK_TRACES=off skip the hook;
 *   the UI still shows every pending activity and timer.
 *
 * The workflow thread stays. The SDK's `debugMode` would run workflows on the main
 * thread (less worker CPU per event: docs/performance.md), but there it
 * installs a process-wide `unhandledRejection` handler that prints the raw error of
 * any rejection outside a workflow (a pg client's holds its password) and replaces
 * `Error.prepareStackTrace` for the whole process.
 *
 * SHIPHOOK_WORKFLOW_DIAGNOSTICS=true keeps both, as the SDK ships them.
 */
export function workflowSandboxOptions(diagnostics: boolean): { isolateExecutionTimeout?: number } {
  if (diagnostics) {
    delete process.env.TEMPORAL_WORKFLOW_STACK_TRACES;
    return {};
  }
  if (!sandboxPatchApplied()) {
    // Without the patch a 0 timeout would fail every workflow task: keep the SDK's defaults.
    log.warn('the Temporal worker patch is not applied (run `npm install`, which runs patch-package): workflow calls keep their watchdog threads and stack traces');
    return {};
  }
  // Worker threads copy the environment when they are created, after this.
  process.env.TEMPORAL_WORKFLOW_STACK_TRACES = 'off';
  return { isolateExecutionTimeout: 0 };
}

/** Whether patches/ reached the installed SDK (a `--ignore-scripts` install skips it). */
export function sandboxPatchApplied(): boolean {
  const require = createRequire(import.meta.url);
  const file = (name: string) => readFileSync(require.resolve(`@temporalio/worker/lib/workflow/${name}`), 'utf8');
  return file('reusable-vm.js').includes('timeout: isolateExecutionTimeoutMs || undefined') && file('vm-shared.js').includes('TEMPORAL_WORKFLOW_STACK_TRACES');
}
