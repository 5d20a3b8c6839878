import type { Client } from '@temporalio/client';
import pg from 'pg';
import { childrenByParent, cpuSeconds, round, treeCpuSeconds } from './processes';
import { type BenchSystem, benchDb } from './system';

/**
 * Where a delivered event's time goes: CPU per process, SQL statements
 * (pg_stat_statements, when the server has it loaded) and the Temporal history of
 * one event's workflow. Measured around a scenario and divided by its events.
 */
export interface CostMeter {
  /** `sample`: event ids whose workflow histories are read (the first one is described in full). */
  stop(events: number, sample?: string[]): Promise<Record<string, unknown>>;
}

export async function startCostMeter(sys: BenchSystem): Promise<CostMeter> {
  const db = await benchDb(sys);
  const statements = await db
    .query('create extension if not exists pg_stat_statements')
    .then(() => db.query('select pg_stat_statements_reset()'))
    .then(() => true, () => false); // not loaded (an external DATABASE_URL): CPU and history only
  const persistenceBefore = await persistenceByOperation(sys.temporalMetricsUrl);
  const cpuBefore = await cpuByProcess(sys);
  return {
    async stop(events, sample = []) {
      const cpuAfter = await cpuByProcess(sys);
      const cpuMs: Record<string, number> = {};
      for (const [name, seconds] of Object.entries(cpuAfter)) cpuMs[name] = round(((seconds - (cpuBefore[name] ?? 0)) * 1000) / events, 2);
      cpuMs.total = round(Object.values(cpuMs).reduce((a, b) => a + b, 0), 2);
      // What the system itself spends (api, workers, Temporal, PostgreSQL): the bench's publisher and receivers excluded.
      cpuMs.system_total = round(cpuMs.total - (cpuMs.bench ?? 0), 2);
      const persistenceAfter = await persistenceByOperation(sys.temporalMetricsUrl);
      const sql = statements ? await statementsPerEvent(db, events) : 'pg_stat_statements is not loaded';
      await db.end();
      return {
        cpu_ms_per_event: cpuMs,
        sql_per_event: sql,
        temporal_persistence_per_event: persistenceBefore && persistenceAfter ? persistencePerEvent(persistenceBefore, persistenceAfter, events) : 'no metrics (an external TEMPORAL_ADDRESS)',
        temporal_history_of_one_event: sample[0] ? await historyShape(sys.temporal, sample[0]) : undefined,
        eager_starts_in_sample: sample.length ? await eagerShare(sys.temporal, sample) : undefined,
      };
    },
  };
}

/** CPU seconds so far of each part of the system (PostgreSQL: the server and its backends). */
async function cpuByProcess(sys: BenchSystem): Promise<Record<string, number>> {
  const children = await childrenByParent();
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(sys.processes())) out[name] = treeCpuSeconds(pid, children);
  out.bench = cpuSeconds(process.pid); // publisher, receivers, this meter
  return out;
}

async function statementsPerEvent(db: pg.Client, events: number) {
  const { rows } = await db.query<{ query: string; calls: string }>(
    `select s.query, s.calls from pg_stat_statements s join pg_database d on d.oid = s.dbid
     where d.datname = current_database() and s.query not ilike '%pg_stat_statements%' order by s.calls desc`,
  );
  const total = rows.reduce((s, r) => s + Number(r.calls), 0);
  return {
    statements: round(total / events, 2),
    by_statement: rows.slice(0, 8).map((r) => ({ per_event: round(Number(r.calls) / events, 2), sql: r.query.replace(/\s+/g, ' ').slice(0, 110) })),
  };
}

type PersistenceCounts = Map<string, { requests: number; seconds: number }>;

/**
 * The Temporal server's persistence requests so far, by operation (its Prometheus
 * counters). The dev server's SQLite store has a single connection, so every request
 * of any workflow queues behind the others: these are what a first attempt waits for.
 */
async function persistenceByOperation(url: string | undefined): Promise<PersistenceCounts | undefined> {
  if (!url) return undefined;
  const text = await fetch(url).then((r) => r.text(), () => '');
  const out: PersistenceCounts = new Map();
  // Visibility writes go to the same SQLite database (and connection) as the workflows' state.
  for (const m of text.matchAll(/^(visibility_)?persistence_(requests|latency_sum)\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...m[3]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const key = `${m[1] ? 'visibility' : (labels.service_name ?? '?')}: ${labels.operation ?? '?'}`;
    const entry = out.get(key) ?? { requests: 0, seconds: 0 };
    if (m[2] === 'requests') entry.requests += Number(m[4]);
    else entry.seconds += Number(m[4]);
    out.set(key, entry);
  }
  return out.size ? out : undefined;
}

function persistencePerEvent(before: PersistenceCounts, after: PersistenceCounts, events: number) {
  const ops = [...after].map(([op, a]) => ({ op, requests: a.requests - (before.get(op)?.requests ?? 0), seconds: a.seconds - (before.get(op)?.seconds ?? 0) })).filter((o) => o.requests > 0);
  const requests = ops.reduce((s, o) => s + o.requests, 0);
  const seconds = ops.reduce((s, o) => s + o.seconds, 0);
  return {
    requests: round(requests / events, 2),
    // Time in persistence calls (waiting for the store included), per event and per request.
    ms: round((seconds * 1000) / events, 2),
    ms_per_request: requests ? round((seconds * 1000) / requests, 3) : 0,
    by_operation: ops.sort((a, b) => b.requests - a.requests).slice(0, 10).map((o) => ({ op: o.op, per_event: round(o.requests / events, 2), ms_per_request: round((o.seconds * 1000) / o.requests, 3) })),
  };
}

/** How many of these workflows the server started eagerly (first task handed to the starting worker). */
async function eagerShare(temporal: Client, workflowIds: string[]) {
  let eager = 0;
  for (const id of workflowIds) {
    const history = await temporal.workflow.getHandle(id).fetchHistory();
    if (history.events?.[0]?.workflowExecutionStartedEventAttributes?.eagerExecutionAccepted) eager++;
  }
  return `${eager} of ${workflowIds.length}`;
}

/** Event counts of one delivery workflow's history: what the Temporal server stored for it. */
export async function historyShape(temporal: Client, workflowId: string) {
  const handle = temporal.workflow.getHandle(workflowId);
  const [history, described] = await Promise.all([handle.fetchHistory(), handle.describe()]);
  const counts: Record<string, number> = {};
  for (const e of history.events ?? []) {
    const type = Object.keys(e).find((k) => k.endsWith('EventAttributes'))?.replace(/EventAttributes$/, '') ?? 'unknown';
    counts[type] = (counts[type] ?? 0) + 1;
  }
  const running = described.status.name === 'RUNNING';
  return {
    events: history.events?.length ?? 0,
    workflow_tasks: counts.workflowTaskCompleted ?? 0,
    activities: counts.activityTaskScheduled ?? 0,
    local_activities: counts.markerRecorded ?? 0,
    timers: counts.timerStarted ?? 0,
    search_attribute_upserts: counts.upsertWorkflowSearchAttributes ?? 0,
    // Mutable-state writes the server made for this run (its persistence cost, history events aside).
    state_transitions: Number(described.raw.workflowExecutionInfo?.stateTransitionCount?.toString() ?? NaN),
    // Estimate. A run that closes in its first workflow task writes one record, its close.
    // One still open after that task writes its start and, at that task, an upsert (the
    // server adds the worker's build id to BuildIds, whatever the workflow does), then its
    // close; search-attribute upserts in those tasks collapse into those writes.
    visibility_writes: running ? 2 : (counts.workflowTaskCompleted ?? 0) <= 1 ? 1 : 3,
  };
}
