import type { Config } from '../src/config';
import type { Db } from '../src/db/database';
import type { SweepResult } from '../src/engine/contract';
import { deleteOldReplays, removeExpiredEvents } from '../src/events/retention';
import { deleteExpiredIdempotencyKeys } from '../src/idempotency/store';
import { deleteEndedPortalSessions } from '../src/portal-sessions/portal-sessions';
import { removeAbandonedListeners } from '../src/listeners/listeners';
import { dropExpiredPayloadPartitions, keepPayloadPartitionsAhead, sweepDefaultPayloads } from '../src/events/payload-partitions';

/** Rows one activity call removes, each call its own short transaction. */
const BATCH = 1000;
const DAY_MS = 86_400_000;

interface SweepDeps {
  config: Config;
  db: Db;
}

/** One bounded step of a sweep at `now`; `more` when it stopped at its bound. */
type Sweep = (deps: SweepDeps, now: Date) => Promise<SweepResult>;

const cutoff = (config: Config, now: Date) => new Date(now.getTime() - config.eventRetentionMs);

/** A sweep that deletes up to BATCH rows per call. */
const batched = (what: string, remove: (deps: SweepDeps, now: Date) => Promise<number>): Sweep => async (deps, now) => {
  const removed = await remove(deps, now);
  return { counts: { [what]: removed }, more: removed >= BATCH };
};

/**
 * What the retention schedule does, in this order, each as often as it needs:
 * events first, so that a payload partition's events are gone when it is checked.
 * Another sweep is one more line here.
 */
export const sweeps: Record<string, Sweep> = {
  events: batched('events', ({ config, db }, now) => removeExpiredEvents(db, cutoff(config, now), BATCH)),
  'payload partitions': async ({ config, db }, now) => {
    const dropped = await dropExpiredPayloadPartitions(db, cutoff(config, now));
    const created = await keepPayloadPartitionsAhead(db, config, now);
    return { counts: { 'payload partitions dropped': dropped, 'payload partitions created': created }, more: false };
  },
  'default payloads': batched('payloads (DEFAULT partition)', ({ config, db }, now) => sweepDefaultPayloads(db, cutoff(config, now), BATCH)),
  'idempotency keys': batched('idempotency keys', ({ db }, now) => deleteExpiredIdempotencyKeys(db, { before: now, limit: BATCH })),
  replays: batched('replays', ({ config, db }, now) => deleteOldReplays(db, { before: cutoff(config, now), limit: BATCH })),
  // A day after they ended: a link used or expired meanwhile still gets its own page.
  'portal sessions': batched('portal sessions', ({ db }, now) => deleteEndedPortalSessions(db, { before: new Date(now.getTime() - DAY_MS), limit: BATCH })),
  // Their streams' timers remove them at the grace period's end; this, those whose api stopped first.
  listeners: batched('listeners', ({ config, db }) => removeAbandonedListeners(db, config, { limit: BATCH })),
};

export function createRetentionActivities(deps: SweepDeps) {
  return {
    /** The sweeps' names, in order (read once per run, so the run's history records them). */
    async retentionSweeps(): Promise<string[]> {
      return Object.keys(sweeps);
    },
    /** One bounded step of one sweep. */
    async retentionSweep(name: string): Promise<SweepResult> {
      const sweep = sweeps[name];
      // A run started before a deploy that renamed a sweep: nothing to do under the old name.
      if (!sweep) return { counts: {}, more: false };
      return sweep(deps, new Date());
    },
  };
}
