import pg from 'pg';
import { round } from './processes';
import type { BenchSystem } from './system';

/**
 * Where the slowest events of a window spent their time, against the window's median
 * event: publish → the row committed (api: `created_at`, the transaction's start),
 * → the workflow started (dispatcher and Temporal: the start event's time), → the
 * healthy receivers saw it (the worker: first task, local activity, SQL, POST). All
 * clocks are this host's. What makes a p99 is in the largest of these differences.
 */
export async function slowestBreakdown(sys: BenchSystem, latencyById: Map<string, { sentAt: number; seenAt: number }>, n = 10) {
  const byLatency = [...latencyById].sort((a, b) => b[1].seenAt - b[1].sentAt - (a[1].seenAt - a[1].sentAt));
  if (byLatency.length === 0) return undefined;
  const slowest = byLatency.slice(0, n);
  const median = byLatency.slice(Math.floor(byLatency.length / 2) - Math.floor(n / 2)).slice(0, n);
  const db = new pg.Client({ connectionString: sys.databaseUrl });
  await db.connect();
  try {
    const ids = [...slowest, ...median].map(([id]) => id);
    const { rows } = await db.query<{ id: string; created_at: Date }>('select id, created_at from events where id = any($1::text[])', [ids]);
    const createdAt = new Map(rows.map((r) => [r.id, r.created_at.getTime()]));
    const stages = async ([id, t]: [string, { sentAt: number; seenAt: number }]) => {
      const history = await sys.temporal.workflow.getHandle(id).fetchHistory();
      const started = history.events?.[0]?.eventTime;
      const startedAt = started ? Number(started.seconds) * 1000 + Math.floor((started.nanos ?? 0) / 1e6) : NaN;
      const created = createdAt.get(id) ?? NaN;
      return { total: t.seenAt - t.sentAt, api: created - t.sentAt, to_start: startedAt - created, start_to_post: t.seenAt - startedAt, sent_at_s: t.sentAt };
    };
    const slow = await Promise.all(slowest.map(stages));
    const mid = await Promise.all(median.map(stages));
    const windowStart = Math.min(...[...latencyById.values()].map((v) => v.sentAt));
    const avg = (xs: typeof slow, k: 'total' | 'api' | 'to_start' | 'start_to_post') => round(xs.reduce((s, x) => s + x[k], 0) / xs.length, 1);
    const summary = (xs: typeof slow) => ({ total: avg(xs, 'total'), api: avg(xs, 'api'), to_start: avg(xs, 'to_start'), start_to_post: avg(xs, 'start_to_post') });
    return {
      median_events_ms: summary(mid),
      slowest_events_ms: summary(slow),
      slowest: slow.map((x) => ({ at_s: round((x.sent_at_s - windowStart) / 1000, 1), total: round(x.total), api: round(x.api), to_start: round(x.to_start), start_to_post: round(x.start_to_post) })),
    };
  } finally {
    await db.end();
  }
}
