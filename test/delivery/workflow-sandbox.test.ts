import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthWorkflowId } from '../../src/temporal/task-queue';
import { sandboxPatchApplied, workflowSandboxOptions } from '../../src/temporal/workflow-sandbox';
import { publish, webhook } from '../support/events';
import { createAccount } from '../support/http';
import { eventually, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
let client: Client;

beforeAll(async () => {
  sys = await startSystem();
  client = await sys.temporal();
});
afterAll(async () => {
  await sys.close();
});

describe('the workflow sandbox (src/temporal/workflow-sandbox.ts)', () => {
  it('npm install applied patches/ to the Temporal worker, so workflow calls can go without a watchdog', () => {
    expect(sandboxPatchApplied()).toBe(true);
    const before = process.env.TEMPORAL_WORKFLOW_STACK_TRACES;
    try {
      expect(workflowSandboxOptions(false)).toEqual({ isolateExecutionTimeout: 0 });
      expect(process.env.TEMPORAL_WORKFLOW_STACK_TRACES).toBe('off');
      expect(workflowSandboxOptions(true)).toEqual({});
      expect(process.env.TEMPORAL_WORKFLOW_STACK_TRACES).toBeUndefined();
    } finally {
      if (before === undefined) delete process.env.TEMPORAL_WORKFLOW_STACK_TRACES;
      else process.env.TEMPORAL_WORKFLOW_STACK_TRACES = before;
    }
  });

  it('a worker with the defaults takes no stack trace per Promise: a waiting workflow has no __stack_trace to give', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver(status(500));
    const hook = await webhook(sys, acct.testKey, receiver.url);
    await publish(sys, acct.user.id, 'test');
    // The first failure starts the webhook's health workflow, which then waits on a condition.
    const handle = client.workflow.getHandle(healthWorkflowId(hook.id));
    await eventually(async () => ((await handle.describe().catch(() => undefined))?.status.name === 'RUNNING' ? true : undefined), 20_000, 'health workflow');
    // With the SDK's promise hook this answers where webhookHealth waits.
    await expect(handle.query<string>('__stack_trace')).rejects.toThrow(/stack traces are not enabled/);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.terminate('test over');
    await receiver.close();
  });
});
