import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

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

/** The parent's pid in a /proc/<pid>/stat line. */
const parentOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);

/** Every process's children, read once: what `descendants` walks. */
export async function childrenByParent(): Promise<Map<number, number[]>> {
  const children = new Map<number, number[]>();
  await Promise.all((await readdir('/proc')).filter((d) => /^\d+$/.test(d)).map(async (d) => {
    const stat = await readFile(`/proc/${d}/stat`, 'utf8').catch(() => undefined); // gone meanwhile
    if (stat) children.set(parentOf(stat), [...(children.get(parentOf(stat)) ?? []), Number(d)]);
  }));
  return children;
}

/** `pid` and every process below it (PostgreSQL's backends, the api's cluster workers). */
export function descendants(pid: number, children: Map<number, number[]>): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]!) ?? []));
  return out;
}

/**
 * What a process holds in MB, from /proc/<pid>/smaps_rollup (0 once the process is gone):
 * `Pss`, where a page shared by n processes counts 1/n in each, so the sum over processes is
 * the memory the system holds, which RSS overstates; or `Rss`, every page it maps, which is
 * what a container of its own is charged for. Read asynchronously: the kernel walks each
 * process's page tables to answer, and the bench's receivers, which time the deliveries,
 * share this thread.
 */
const MEMORY_LINE = { Pss: /^Pss:\s+(\d+) kB/m, Rss: /^Rss:\s+(\d+) kB/m };
export type MemoryKind = keyof typeof MEMORY_LINE;

async function memoryMb(pid: number, kind: MemoryKind): Promise<number> {
  const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
  const kb = MEMORY_LINE[kind].exec(text);
  return kb ? Number(kb[1]) / 1024 : 0;
}

/** Memory (MB) of each named process with everything below it. */
export async function memoryByProcess(pids: Record<string, number>, kind: MemoryKind): Promise<Record<string, number>> {
  const children = await childrenByParent();
  const sums = await Promise.all(Object.values(pids).map(async (pid) => (await Promise.all(descendants(pid, children).map((p) => memoryMb(p, kind)))).reduce((s, mb) => s + mb, 0)));
  return Object.fromEntries(Object.keys(pids).map((name, i) => [name, sums[i]!]));
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

/** With what reaped children used too (PostgreSQL's backends come and go): every CPU second of the tree, once. */
export const treeCpuSeconds = (pid: number, children: Map<number, number[]>) => descendants(pid, children).reduce((s, p) => s + cpuFields(p).reduce((a, b) => a + b, 0), 0);

export interface MemoryPeaks {
  /** The largest sum over every process of the system at one sample. */
  whole_system: number;
  by_process: Record<string, number>;
}

/**
 * PSS (or `kind`) of the system's processes every `everyMs`: `run()` gives the peaks since
 * the start, `scenario()` since its last call. Seldom, because the kernel holds each
 * process's memory map while it walks it, which stalls the process (and the latencies measured).
 */
export function memorySampler(pids: () => Record<string, number>, everyMs = 10_000, kind: MemoryKind = 'Pss') {
  const empty = (): MemoryPeaks => ({ whole_system: 0, by_process: {} });
  const run = empty();
  let scenario = empty();
  const rounded = (p: MemoryPeaks): MemoryPeaks => ({ whole_system: round(p.whole_system), by_process: Object.fromEntries(Object.entries(p.by_process).map(([k, v]) => [k, round(v)])) });
  let sampling: Promise<void> = Promise.resolve();
  const sample = () => {
    // One sample at a time (a slow one is not overtaken); a failed one is skipped.
    sampling = sampling.then(async () => {
      const now = await memoryByProcess(pids(), kind);
      const total = Object.values(now).reduce((a, b) => a + b, 0);
      for (const peaks of [run, scenario]) {
        peaks.whole_system = Math.max(peaks.whole_system, total);
        for (const [k, v] of Object.entries(now)) peaks.by_process[k] = Math.max(peaks.by_process[k] ?? 0, v);
      }
    }).catch(() => undefined);
    return sampling;
  };
  const timer = setInterval(sample, everyMs);
  return {
    run: () => rounded(run),
    async scenario() {
      await sample();
      const peaks = rounded(scenario);
      scenario = empty();
      return peaks;
    },
    stop: () => clearInterval(timer),
  };
}

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
