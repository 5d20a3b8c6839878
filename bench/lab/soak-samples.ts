import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type pg from 'pg';
import { childrenByParent, descendants, memoryByProcess, round } from '../processes';
import { tableBytes, temporalStoreBytes } from '../storage';
import type { BenchSystem } from '../system';

const fdLinks = (pid: number) => readdirSync(`/proc/${pid}/fd`).map((fd) => {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return ''; // closed meanwhile
  }
});

/** Socket inode → remote port of every established TCP connection on this host. */
function remotePorts(): Map<string, number> {
  const out = new Map<string, number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '01') out.set(f[9]!, parseInt(f[2]!.split(':')[1]!, 16)); // 01: ESTABLISHED
    }
  }
  return out;
}

/**
 * One sample of what could grow over hours, flat (`rss_mb.worker`, `open_workflows.deliverEvent`,
 * …) so that every key is a series: each process's RSS (with its children: the api's
 * cluster workers, PostgreSQL's backends) and file descriptors, its connections to
 * PostgreSQL and to Temporal (its sockets whose far end is their port), PostgreSQL's
 * connections by state, running workflows by type and schedules, table sizes, the events kept, the
 * Temporal store's size and the outbox lag (age of the oldest undispatched event).
 */
export async function soakSample(sys: BenchSystem, db: pg.Client): Promise<Record<string, number>> {
  const s: Record<string, number> = {};
  const ports = remotePorts();
  const pgPort = Number(new URL(sys.databaseUrl).port);
  const temporalPort = Number(sys.temporalAddress.split(':').pop());
  const children = await childrenByParent();
  for (const [name, mb] of Object.entries(await memoryByProcess(sys.processes(), 'Rss'))) s[`rss_mb.${name}`] = round(mb);
  for (const [name, pid] of Object.entries(sys.processes())) {
    const links = descendants(pid, children).flatMap((p) => { try { return fdLinks(p); } catch { return []; } });
    s[`fds.${name}`] = links.length;
    const to = (port: number) => links.filter((l) => ports.get(/^socket:\[(\d+)\]$/.exec(l)?.[1] ?? '') === port).length;
    if (name !== 'postgres') Object.assign(s, { [`connections_to_postgres.${name}`]: to(pgPort), [`connections_to_temporal.${name}`]: to(temporalPort) });
  }
  const activity = await db.query<{ state: string; n: string }>(`select coalesce(state, backend_type) as state, count(*) as n from pg_stat_activity where datname = current_database() group by 1`);
  for (const r of activity.rows) s[`pg_stat_activity.${r.state}`] = Number(r.n);
  for await (const wf of sys.temporal.workflow.list({ query: 'ExecutionStatus = "Running"' })) s[`open_workflows.${wf.type}`] = (s[`open_workflows.${wf.type}`] ?? 0) + 1;
  s.schedules = 0;
  for await (const _ of sys.temporal.schedule.list()) s.schedules++;
  for (const [table, bytes] of Object.entries(await tableBytes(db))) s[`table_mb.${table}`] = round(bytes / 2 ** 20, 2);
  // What retention keeps: about the rate times SHIPHOOK_EVENT_RETENTION once it runs.
  s.events_kept = Number((await db.query<{ n: string }>('select count(*) as n from events')).rows[0]!.n);
  const store = temporalStoreBytes(sys);
  if (store !== undefined) s.temporal_store_mb = round(store / 2 ** 20, 2);
  const lag = await db.query<{ seconds: number | null }>(`select extract(epoch from now() - min(created_at))::float8 as seconds from events where dispatched_at is null and dispatch_failed_at is null`);
  s.outbox_lag_seconds = round(lag.rows[0]?.seconds ?? 0, 1);
  return s;
}

/**
 * Least-squares slope of each series over the second half of the load (after warm-up, up to
 * minute `loadMinutes`), per hour: a series that does not grow has a slope near 0 beside its mean.
 */
export function slopesPerHour(minutes: number[], series: Record<string, (number | null)[]>, loadMinutes: number) {
  const out: Record<string, { slope_per_hour: number; mean: number }> = {};
  for (const [key, values] of Object.entries(series)) {
    const pts = minutes.map((m, i) => [m, values[i]] as const).filter((p): p is readonly [number, number] => p[0] >= loadMinutes / 2 && p[0] <= loadMinutes + 0.5 && p[1] !== null);
    if (pts.length < 2) continue;
    const mx = pts.reduce((s, p) => s + p[0], 0) / pts.length;
    const my = pts.reduce((s, p) => s + p[1], 0) / pts.length;
    const sxx = pts.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
    const slope = sxx ? pts.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0) / sxx : 0;
    out[key] = { slope_per_hour: round(slope * 60, 2), mean: round(my, 2) };
  }
  return out;
}
