import { tsToMs } from '@temporalio/common/lib/time';
import { round } from './processes';
import { type BenchSystem, benchDb } from './system';

/**
 * Where the slowest events of a window spent their time, against the window's median
 * event: publish → the row committed (api: `created_at`, the transaction's start),
 * → the workflow started (dispatcher and Temporal: the start event's time), → the
 * healthy receivers saw it (the worker: first task, local activity, SQL, POST). All
 * clocks are this host's. What makes a p99 is in the largest of these differences.
 */
export async function slowestBreakdown(sys: BenchSystem, latencyById: Map<string, { sentAt: number; seenAt: number }>, windowStart: number, n = 10) {
  const byLatency = [...latencyById].sort((a, b) => b[1].seenAt - b[1].sentAt - (a[1].seenAt - a[1].sentAt));
  if (byLatency.length === 0) return undefined;
  const slowest = byLatency.slice(0, n);
  const median = byLatency.slice(Math.floor(byLatency.length / 2) - Math.floor(n / 2)).slice(0, n);
  const db = await benchDb(sys);
  try {
    const ids = [...slowest, ...median].map(([id]) => id);
    const { rows } = await db.query<{ id: string; created_at: Date }>('select id, created_at from events where id = any($1::text[])', [ids]);
    const createdAt = new Map(rows.map((r) => [r.id, r.created_at.getTime()]));
    const stages = async ([id, t]: [string, { sentAt: number; seenAt: number }]) => {
      const history = await sys.temporal.workflow.getHandle(id).fetchHistory();
      const startedAt = tsToMs(history.events?.[0]?.eventTime);
      const created = createdAt.get(id) ?? NaN;
      return { total: t.seenAt - t.sentAt, api: created - t.sentAt, to_start: startedAt - created, start_to_post: t.seenAt - startedAt };
    };
    const slow = await Promise.all(slowest.map(stages));
    const mid = await Promise.all(median.map(stages));
    type Stages = (typeof slow)[number];
    const mean = (xs: Stages[]) => Object.fromEntries((Object.keys(xs[0]!) as (keyof Stages)[]).map((k) => [k, round(xs.reduce((s, x) => s + x[k], 0) / xs.length, 1)]));
    return {
      median_events_ms: mean(mid),
      slowest_events_ms: mean(slow),
      slowest: slow.map((x, i) => ({ at_s: round((slowest[i]![1].sentAt - windowStart) / 1000, 1), ...Object.fromEntries(Object.entries(x).map(([k, v]) => [k, round(v)])) })),
    };
  } finally {
    await db.end();
  }
}
