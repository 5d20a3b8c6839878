import { readdirSync, readFileSync } from 'node:fs';

/** RSS and CPU time of processes, read from /proc (Linux). */
const HZ = 100;

export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

export function findPids(match: (cmd: string) => boolean): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => match(cmdline(pid)));
}

/** `pid` and every process below it (PostgreSQL's backends, for instance). */
export function descendants(pid: number): number[] {
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
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]!) ?? []));
  return out;
}

/** Resident set size in MB, from VmRSS in /proc/<pid>/status (0 once the process is gone). */
export function rssMb(pid: number): number {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kb ? Number(kb[1]) / 1024 : 0;
  } catch {
    return 0;
  }
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

/** RSS (MB) and CPU seconds of a process and everything below it (an API of several processes). */
export const treeRssMb = (pid: number) => descendants(pid).reduce((s, p) => s + rssMb(p), 0);
/**
 * With what reaped children used too (PostgreSQL's backends come and go with the
 * pools' connections): every CPU second of the tree, counted once.
 */
export const treeCpuSeconds = (pid: number) => descendants(pid).reduce((s, p) => s + cpuFields(p).reduce((a, b) => a + b, 0), 0);

/** Samples RSS every `everyMs`, keeping the peak per name (reads `pids` each time: a restarted process keeps its name). */
export function peakSampler(pids: Record<string, number>, everyMs = 500) {
  const peak: Record<string, number> = Object.fromEntries(Object.keys(pids).map((k) => [k, 0]));
  const timer = setInterval(() => {
    for (const [name, pid] of Object.entries(pids)) peak[name] = Math.max(peak[name] ?? 0, treeRssMb(pid));
  }, everyMs);
  return { peak, stop: () => clearInterval(timer) };
}

/** CPU use (% of one core) and RSS of each process (with its children) over a window. */
export async function usageOver(pids: Record<string, number>, windowMs: number) {
  const before = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, treeCpuSeconds(p)]));
  await new Promise((r) => setTimeout(r, windowMs));
  return Object.fromEntries(
    Object.entries(pids).map(([k, p]) => [k, { cpu_percent: round(((treeCpuSeconds(p) - before[k]!) / (windowMs / 1000)) * 100), rss_mb: round(treeRssMb(p)) }]),
  );
}

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
