import { type Client, ScheduleAlreadyRunning, type ScheduleExecutionActionResult, ScheduleNotFoundError, type ScheduleOptionsStartWorkflowAction, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Config } from '../config';
import { retention } from '../../workflows/retention';
import { type Retention, type RetentionCounts, retentionScheduleId } from './contract';

/**
 * The retention Schedule (workflows/retention.ts every SHIPHOOK_RETENTION_EVERY, one run
 * at a time), made or brought in line with the configuration whenever a worker starts.
 * An operator's pause (Temporal UI, `temporal schedule toggle`) is kept.
 */
export async function ensureRetentionSchedule(client: Client, config: Config): Promise<void> {
  const scheduleId = retentionScheduleId(config.taskQueue);
  const spec = { intervals: [{ every: config.retentionEveryMs }] };
  // By reference, as the starters start theirs: the arguments are type-checked.
  const action: ScheduleOptionsStartWorkflowAction<Retention> = {
    type: 'startWorkflow',
    workflowType: retention,
    args: [{}],
    taskQueue: config.taskQueue,
    // The Schedule appends each run's time to it.
    workflowId: scheduleId,
  };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP };
  try {
    await client.schedule.create({ scheduleId, spec, action, policies, state: { note: 'Removes expired events and Payload partitions (shiphook)' } });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((current) => ({ ...current, spec, action, policies: { ...current.policies, ...policies } }));
  }
}

/**
 * Triggers the Schedule now and waits for the run, returning what it removed. A run that
 * is going already is waited for first (a trigger meanwhile would be skipped: one at a
 * time), so the run reported started after this was called.
 */
export async function runRetentionNow(client: Client, config: Pick<Config, 'taskQueue'>, startWithinMs = 60_000): Promise<RetentionCounts> {
  const scheduleId = retentionScheduleId(config.taskQueue);
  const schedule = client.schedule.getHandle(scheduleId);
  const describe = () =>
    schedule.describe().catch((err) => {
      if (err instanceof ScheduleNotFoundError) throw new Error(`there is no ${scheduleId} schedule yet: a worker creates it when it starts`);
      throw err;
    });
  const result = (run: ScheduleExecutionActionResult) => client.workflow.getHandle<Retention>(run.workflow.workflowId, run.workflow.firstExecutionRunId).result();
  let before = await describe();
  if (before.info.runningActions.length) {
    await Promise.all(before.info.runningActions.map((run) => result(run).catch(() => undefined)));
    before = await describe();
  }
  const known = new Set(before.info.recentActions.map((a) => a.action.workflow.firstExecutionRunId));
  await schedule.trigger(ScheduleOverlapPolicy.SKIP);
  for (const until = Date.now() + startWithinMs; ; ) {
    const run = (await describe()).info.recentActions.map((a) => a.action).find((a) => !known.has(a.workflow.firstExecutionRunId));
    if (run) return result(run);
    if (Date.now() > until) throw new Error(`the ${scheduleId} schedule started no run (is a worker running?)`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
