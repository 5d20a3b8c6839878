// Run by test/delivery/workflow-main-thread.test.ts in a process of its own: the worker's
// crash handler, then a delivery workflow replayed on this thread with the worker's
// sandbox options, so the SDK's process-wide handlers are installed as in a worker.
import { readFileSync } from 'node:fs';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { logCrashesAndExit } from '../../src/log';
import { workflowBundle } from '../../src/temporal/workflow-bundle';
import { workflowSandboxOptions } from '../../src/temporal/workflow-sandbox';

logCrashesAndExit();
const sandbox = workflowSandboxOptions(false);
const history = proto.temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(process.argv[2]!, 'utf8')));
await Worker.runReplayHistory({ workflowBundle: await workflowBundle(undefined), replayName: 'main-thread-child', ...sandbox }, history, 'main-thread-child');
// A subclass, as most errors are (TypeError, pg's DatabaseError): the SDK's stack-trace override
// formats those itself, with the transpiled positions.
process.stdout.write(JSON.stringify({ sandbox, stack: new TypeError('where').stack /* STACK-LINE */ }) + '\n');
// A rejection nobody handles, outside any workflow, carrying a secret in its dump.
void Promise.reject(Object.assign(new Error('connection lost'), { client: { password: process.argv[3] } }));
