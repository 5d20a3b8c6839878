import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { log } from '../log';

/**
 * What the Temporal SDK's workflow sandbox does on every call into a workflow, and
 * what shiphook turns off (patches/@temporalio+worker+*.patch, applied by
 * `npm install` through patch-package; bench figures in the README, Performance):
 *
 * - Deadlock detection: the SDK passes a 5 s `timeout` to every `vm` call into a
 *   workflow, and Node enforces a `vm` timeout by creating and joining a watchdog
 *   thread per call (~80 µs of CPU each, several calls per workflow task). The patch
 *   lets 0 mean "no timeout". A delivery workflow is a few lines of our own code
 *   with no loop over anything unbounded; should one ever spin, the server's
 *   10 s workflow-task timeout still shows it in the UI.
 * - Stack traces: a promise hook takes a source-mapped stack trace of every
 *   Promise a workflow creates, for the `__stack_trace` query (the UI's "Stack
 *   Trace" tab). The patch lets TEMPORAL_WORKFLOW_STACK_TRACES=off skip the hook;
 *   the UI still shows every pending activity and timer.
 * - The workflow thread: the SDK runs workflows on a worker thread and posts every
 *   activation to it and every completion back (a structured clone each way, and
 *   two thread hand-offs between the server's answer to an eager start and the
 *   first POST). Its `debugMode` runs the same reusable sandbox on the main thread,
 *   where core's activations arrive; in SDK 1.x it changes nothing else (it only
 *   lifts the execution-time limit, which the patch lifts already). A workflow
 *   that spun would now hold the whole worker rather than its thread; ours has
 *   nothing that can spin (as above). Bench figures: README, Performance.
 *
 * SHIPHOOK_WORKFLOW_DIAGNOSTICS=true keeps all three, as the SDK ships them.
 */
export function workflowSandboxOptions(diagnostics: boolean): { isolateExecutionTimeout?: number; debugMode?: boolean } {
  if (diagnostics) {
    delete process.env.TEMPORAL_WORKFLOW_STACK_TRACES;
    return {};
  }
  if (!sandboxPatchApplied()) {
    // Without the patch a 0 timeout would fail every workflow task: keep the SDK's defaults.
    log.warn('the Temporal worker patch is not applied (run `npm install`, which runs patch-package): workflow calls keep their watchdog threads and stack traces');
    return {};
  }
  // Read when the sandbox is created, after this.
  process.env.TEMPORAL_WORKFLOW_STACK_TRACES = 'off';
  return { isolateExecutionTimeout: 0, debugMode: true };
}

/** Whether patches/ reached the installed SDK (a `--ignore-scripts` install skips it). */
export function sandboxPatchApplied(): boolean {
  const require = createRequire(import.meta.url);
  const file = (name: string) => readFileSync(require.resolve(`@temporalio/worker/lib/workflow/${name}`), 'utf8');
  return file('reusable-vm.js').includes('timeout: isolateExecutionTimeoutMs || undefined') && file('vm-shared.js').includes('TEMPORAL_WORKFLOW_STACK_TRACES');
}
