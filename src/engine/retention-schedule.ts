import { type Client, ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Config } from '../config';
import { RETENTION_SCHEDULE_ID, type Retention, type RetentionCounts } from './contract';

/**
 * The retention Schedule (workflows/retention.ts every SHIPHOOK_RETENTION_EVERY, one run
 * at a time), made or brought in line with the configuration whenever a worker starts.
 * An operator's pause (Temporal UI, `temporal schedule toggle`) is kept.
 */
export async function ensureRetentionSchedule(client: Client, config: Config): Promise<void> {
  const spec = { intervals: [{ every: config.retentionEveryMs }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'retention',
    args: [{}] as Parameters<Retention>,
    taskQueue: config.taskQueue,
    // The Schedule appends each run's time to it.
    workflowId: RETENTION_SCHEDULE_ID,
  };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP };
  try {
    await client.schedule.create({ scheduleId: RETENTION_SCHEDULE_ID, spec, action, policies, state: { note: 'Removes expired events and Payload partitions (shiphook)' } });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(RETENTION_SCHEDULE_ID).update((current) => ({ ...current, spec, action, policies: { ...current.policies, ...policies } }));
  }
}

/**
 * Triggers the Schedule now and waits for the run: the one the trigger started, or,
 * when a run was going already (the trigger is then skipped: one at a time), that one.
 * Returns what the run removed.
 */
export async function runRetentionNow(client: Client, startWithinMs = 60_000): Promise<RetentionCounts> {
  const schedule = client.schedule.getHandle(RETENTION_SCHEDULE_ID);
  const before = await schedule.describe().catch((err) => {
    if (err instanceof ScheduleNotFoundError) throw new Error(`there is no ${RETENTION_SCHEDULE_ID} schedule yet: a worker creates it when it starts`);
    throw err;
  });
  const known = new Set(before.info.recentActions.map((a) => a.action.workflow.firstExecutionRunId));
  await schedule.trigger(ScheduleOverlapPolicy.SKIP);
  for (const until = Date.now() + startWithinMs; ; ) {
    const { info } = await schedule.describe();
    const run = info.recentActions.map((a) => a.action).find((a) => !known.has(a.workflow.firstExecutionRunId)) ?? info.runningActions[0];
    if (run) return client.workflow.getHandle<Retention>(run.workflow.workflowId, run.workflow.firstExecutionRunId).result();
    if (Date.now() > until) throw new Error(`the ${RETENTION_SCHEDULE_ID} schedule started no run (is it paused? is a worker running?)`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
