import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { log } from '../log';

/**
 * How the Temporal SDK runs workflows, and what shiphook changes
 * (patches/@temporalio+worker+*.patch, applied by `npm install` through patch-package;
 * bench figures in the README, Performance):
 *
 * - Workflows run on the worker's main thread (the SDK's `debugMode`), not on a
 *   thread of their own: no copy of every activation and completion between two
 *   threads, one heap and one thread fewer wanting the cores. The SDK installs two
 *   process-wide handlers there, which the patch tames: its `unhandledRejection`
 *   handler printed the raw error of any rejection outside a workflow (a pg
 *   client's holds its password) and now prints only the run id, leaving the error
 *   to the process's crash handler (masked); and its `Error.prepareStackTrace`,
 *   which would replace the process's source-mapped stack traces, is skipped with
 *   stack traces off (below). A workflow that spun would now stop the whole
 *   process rather than its thread: the health endpoint stops answering, which a
 *   liveness probe sees.
 * - Deadlock detection: the SDK passes a 5 s `timeout` to every `vm` call into a
 *   workflow, and Node enforces a `vm` timeout by creating and joining a watchdog
 *   thread per call (~80 µs of CPU each, several calls per workflow task). The patch
 *   lets 0 mean "no timeout". A delivery workflow is a few lines of our own code
 *   with no loop over anything unbounded; should one ever spin, the server's
 *   10 s workflow-task timeout still shows it in the UI.
 * - Stack traces: a promise hook takes a source-mapped stack trace of every
 *   Promise a workflow creates, for the `__stack_trace` query (the UI's "Stack
 *   Trace" tab). The patch lets TEMPORAL_WORKFLOW_STACK_TRACES=off skip the hook
 *   and the stack-trace override it needs; the UI still shows every pending
 *   activity and timer, and a workflow's own errors keep the bundle's positions.
 *
 * SHIPHOOK_WORKFLOW_DIAGNOSTICS=true keeps all of it as the SDK ships it (workflow
 * thread, watchdog, stack traces); so does an install without the patch.
 */
export function workflowSandboxOptions(diagnostics: boolean): { isolateExecutionTimeout?: number; debugMode?: boolean } {
  if (diagnostics) {
    delete process.env.TEMPORAL_WORKFLOW_STACK_TRACES;
    return {};
  }
  if (!sandboxPatchApplied()) {
    // Without the patch a 0 timeout would fail every workflow task, and the main thread would get the SDK's raw handlers.
    log.warn('the Temporal worker patch is not applied (run `npm install`, which runs patch-package): workflows keep their own thread, watchdog threads and stack traces');
    return {};
  }
  // Read when the worker creates its workflow sandbox, after this.
  process.env.TEMPORAL_WORKFLOW_STACK_TRACES = 'off';
  return { isolateExecutionTimeout: 0, debugMode: true };
}

/** Whether patches/ reached the installed SDK (a `--ignore-scripts` install skips it). */
export function sandboxPatchApplied(): boolean {
  const require = createRequire(import.meta.url);
  const file = (name: string) => readFileSync(require.resolve(`@temporalio/worker/lib/workflow/${name}`), 'utf8');
  const shared = file('vm-shared.js');
  return file('reusable-vm.js').includes('timeout: isolateExecutionTimeoutMs || undefined') && shared.includes("TEMPORAL_WORKFLOW_STACK_TRACES !== 'off') {") && shared.includes('a Workflow Run\', { runId });');
}
