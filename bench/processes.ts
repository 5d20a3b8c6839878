import { readdirSync, readFileSync } from 'node:fs';

/** CPU time and memory of processes, read from /proc (Linux). */
const HZ = 100;

/** The processes whose command line matches. */
export function findPids(match: (cmd: string) => boolean): number[] {
  const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
    try {
      return match(cmdline(pid));
    } catch {
      return false; // gone meanwhile
    }
  });
}

/** Every process's children, read once: what `descendants` walks. */
function childrenByParent(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** `pid` and every process below it (PostgreSQL's backends, the api's cluster workers). */
export function descendants(pid: number, children = childrenByParent()): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]!) ?? []));
  return out;
}

/**
 * Proportional set size in MB (Pss in /proc/<pid>/smaps_rollup; 0 once the process is
 * gone): a page shared by n processes counts 1/n in each, so the sum over processes is
 * the memory the system holds, which RSS overstates.
 */
export function pssMb(pid: number): number {
  try {
    const kb = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return kb ? Number(kb[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** PSS (MB) of each named process with everything below it. */
export function pssByProcess(pids: Record<string, number>): Record<string, number> {
  const children = childrenByParent();
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, descendants(pid, children).reduce((s, p) => s + pssMb(p), 0)]));
}

/** user+system CPU seconds used so far by the process itself. */
export function cpuSeconds(pid: number): number {
  const [utime, stime] = cpuFields(pid);
  return utime! + stime!;
}

/** utime, stime, cutime, cstime (seconds): the last two are what its reaped children used. */
function cpuFields(pid: number): number[] {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [11, 12, 13, 14].map((i) => Number(fields[i]) / HZ);
  } catch {
    return [0, 0, 0, 0];
  }
}

/**
 * With what reaped children used too (PostgreSQL's backends come and go with the
 * pools' connections): every CPU second of the tree, counted once.
 */
export const treeCpuSeconds = (pid: number) => descendants(pid).reduce((s, p) => s + cpuFields(p).reduce((a, b) => a + b, 0), 0);

export interface MemoryPeaks {
  /** The largest sum over every process of the system at one sample. */
  whole_system: number;
  by_process: Record<string, number>;
}

/**
 * Samples the PSS of the system's processes every `everyMs` (`pids` is read each time:
 * a restarted worker keeps its name). `run()` gives the peaks since the start,
 * `scenario()` those since its previous call.
 */
export function memorySampler(pids: () => Record<string, number>, everyMs = 1000) {
  const empty = (): MemoryPeaks => ({ whole_system: 0, by_process: {} });
  const run = empty();
  let scenario = empty();
  const rounded = (p: MemoryPeaks): MemoryPeaks => ({ whole_system: round(p.whole_system), by_process: Object.fromEntries(Object.entries(p.by_process).map(([k, v]) => [k, round(v)])) });
  const sample = () => {
    const now = pssByProcess(pids());
    const total = Object.values(now).reduce((a, b) => a + b, 0);
    for (const peaks of [run, scenario]) {
      peaks.whole_system = Math.max(peaks.whole_system, total);
      for (const [k, v] of Object.entries(now)) peaks.by_process[k] = Math.max(peaks.by_process[k] ?? 0, v);
    }
  };
  const timer = setInterval(sample, everyMs);
  return {
    run: () => rounded(run),
    scenario() {
      sample();
      const peaks = rounded(scenario);
      scenario = empty();
      return peaks;
    },
    stop: () => clearInterval(timer),
  };
}

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
