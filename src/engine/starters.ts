import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { webhookHealth } from '../../workflows/webhook-health';
import { testTracker } from '../../workflows/test-tracker';
import type { HealthWorkflows } from '../webhooks/health';
import { deletedSignal, failingSignal, healthWorkflowId, type HealthInput, type HealthSignals, reenabledSignal, recoveredSignal, testTrackerWorkflowId } from './contract';
import type { TemporalDeps } from './client';

/**
 * The starts and signals of the workflows besides an event's delivery (which the
 * outbox starts): by reference, so their arguments are type-checked.
 */

/** A test-mode tracker that advances by itself (workflows/test-tracker.ts). */
export async function startTestTracker(deps: TemporalDeps, trackerId: string): Promise<void> {
  const client = await deps.temporal();
  await client.workflow.start(testTracker, {
    taskQueue: deps.config.taskQueue,
    workflowId: testTrackerWorkflowId(trackerId),
    args: [{ trackerId, stepMs: deps.config.testTrackerStepMs }],
  });
}

/** The signals delivery activities send a webhook's health workflow, which the first one starts. */
export function healthSignals(client: Client, config: Config): HealthSignals {
  // No policy in the input: the workflow asks for the current one whenever it decides.
  const start = (webhookId: string) => ({
    workflowId: healthWorkflowId(webhookId),
    taskQueue: config.taskQueue,
    args: [{ webhookId }] satisfies [HealthInput],
  });
  return {
    async failing(webhookId, since) {
      await client.workflow.signalWithStart(webhookHealth, { ...start(webhookId), signal: failingSignal, signalArgs: [{ since: since.getTime() }] });
    },
    async recovered(webhookId) {
      await client.workflow.signalWithStart(webhookHealth, { ...start(webhookId), signal: recoveredSignal, signalArgs: [] });
    },
  };
}

/**
 * What the API tells a webhook's health workflow when the webhook changes (handed to
 * the webhooks' operations). A webhook without a running workflow has nothing to
 * tell: resolves false, and starts none.
 */
export function healthWorkflows(deps: TemporalDeps): HealthWorkflows {
  const tell = async (webhookId: string, signal: typeof reenabledSignal | typeof deletedSignal): Promise<boolean> => {
    const client = await deps.temporal();
    try {
      await client.workflow.getHandle(healthWorkflowId(webhookId)).signal(signal);
      return true;
    } catch (err) {
      if ((err as Error).name === 'WorkflowNotFoundError') return false;
      throw err;
    }
  };
  return {
    restart: (webhookId) => tell(webhookId, reenabledSignal),
    end: (webhookId) => tell(webhookId, deletedSignal),
  };
}
