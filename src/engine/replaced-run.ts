import type { Client } from '@temporalio/client';
import { deliveryWorkflowId } from './contract';

/**
 * A replay or recovery replaces the event's open run (still retrying, or failed and
 * waiting for this: workflows/deliver-event.ts). It is terminated first with a reason
 * that names what replaced it, which the Temporal UI shows on the old run; the start's
 * TERMINATE_EXISTING (outbox.ts) would end it too, but with the server's own reason
 * ("TerminateIfRunning WorkflowIdReusePolicy"), which says nothing to an operator. With
 * no open run (the event had completed) there is nothing to terminate.
 */
export async function terminateReplacedRun(client: Client, eventId: string, replayedBy: string): Promise<void> {
  try {
    await client.workflow.getHandle(deliveryWorkflowId(eventId)).terminate(`replayed by ${replayedBy}`);
  } catch (err) {
    if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
  }
}

/**
 * What replaced a run, as its termination names it: a broad replay or a recovery by its
 * handle (`replay_…`: GET /admin/v1/replays/:id, GET /v2/recoveries/:id), a replay of the
 * event alone (marked with the event's own id, src/engine/replay.ts) by its call.
 */
export const replayedBy = (eventId: string, replayId: string | null): string =>
  replayId && replayId !== eventId ? replayId : `POST /v2/events/${eventId}/replay`;
