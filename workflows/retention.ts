import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { Retention, RetentionCounts } from '../src/engine/contract';

// A sweep that keeps failing fails the run (the Schedule shows it) rather than holding
// every later run back: one runs at a time.
const { retentionSweeps, retentionSweep } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1s', maximumInterval: '1 minute', maximumAttempts: 10 },
});

/** Activity calls per run before continuing as new: keeps the history short. */
const CALLS_PER_RUN = 500;

/**
 * The retention run, started by the retention Schedule (`shiphook-retention`; one at a time):
 * each sweep (activities/retention.ts) in order, called again while it reports more,
 * each call one short transaction over a bounded batch. Returns what it removed.
 */
export const retention: Retention = async (input) => {
  const names = input.sweeps ?? (await retentionSweeps());
  const counts: RetentionCounts = { ...input.counts };
  let calls = 0;
  for (let i = input.sweepIndex ?? 0; i < names.length; i++) {
    for (let more = true; more; ) {
      if (calls++ >= CALLS_PER_RUN) return continueAsNew<Retention>({ sweeps: names, sweepIndex: i, counts });
      const result = await retentionSweep(names[i]!);
      for (const [what, n] of Object.entries(result.counts)) counts[what] = (counts[what] ?? 0) + n;
      more = result.more;
    }
  }
  return counts;
};
