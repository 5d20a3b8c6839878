import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readlinkSync, readSync } from 'node:fs';
import path from 'node:path';
import { onPath } from '../src/launcher/on-path';
import { round } from './processes';

/**
 * Where the Temporal dev server's CPU goes in one measured window (`--profile`): `perf`
 * samples the server's stacks (199 Hz) while the window runs, and the summary sorts them
 * into the server's parts — visibility writes by kind, each history, matching and
 * frontend RPC, the history queues' tasks, Go's collector, gRPC transport. The `temporal`
 * binary is stripped, so its frames are named from its Go line table with
 * `go tool addr2line`; without `perf` or `go` the summary says what is missing (the
 * perf.data file stays in the profiles folder either way).
 */
export interface TemporalProfile {
  /** `events`: the window's, for the CPU milliseconds per event of each part. */
  stop(events: number): Promise<TemporalProfileSummary | string>;
}

export interface TemporalProfileSummary {
  perf_data: string;
  samples: number;
  cpu_seconds: number;
  /** Each sample goes to the first part its stack shows, in the order of `serverPart`. */
  cpu_ms_per_event_by_part: Record<string, number>;
  percent_by_part: Record<string, number>;
  percent_by_function_self: Record<string, number>;
}

const SAMPLE_HZ = 199;

export function startTemporalProfile(profileDir: string | undefined, temporalPid: number | undefined, label: string): TemporalProfile | undefined {
  if (!profileDir) return undefined;
  if (!temporalPid) return { stop: async () => 'not profiled: Temporal is external (TEMPORAL_ADDRESS)' };
  const perf = onPath('perf');
  if (!perf) return { stop: async () => 'not profiled: `perf` is not installed (Debian: linux-perf)' };
  let binary: string;
  try {
    binary = readlinkSync(`/proc/${temporalPid}/exe`);
  } catch {
    return { stop: async () => 'not profiled: the dev server is gone' };
  }
  mkdirSync(profileDir, { recursive: true });
  const file = path.join(profileDir, `temporal-${label}.perf.data`);
  const recorder = spawn(perf, ['record', '-q', '-F', String(SAMPLE_HZ), '-g', '-p', String(temporalPid), '-o', file], { stdio: 'ignore' });
  // A recorder that could not start or stopped early leaves no file: the summary says so.
  const exited = new Promise<void>((resolve) => {
    recorder.once('exit', () => resolve());
    recorder.once('error', () => resolve());
  });
  return {
    async stop(events) {
      if (recorder.exitCode === null && recorder.signalCode === null) recorder.kill('SIGINT'); // perf writes its file on SIGINT
      await exited;
      return summarize(perf, file, binary, events);
    },
  };
}

/** Go's own installer puts it in /usr/local/go/bin without adding that to PATH for every shell. */
function goTool(): string | undefined {
  return onPath('go') ?? (spawnSync('/usr/local/go/bin/go', ['version']).status === 0 ? '/usr/local/go/bin/go' : undefined);
}

interface Frame {
  ip: bigint;
  sym: string;
  dso: string;
}

function summarize(perf: string, file: string, binary: string, events: number): TemporalProfileSummary | string {
  const script = spawnSync(perf, ['script', '-i', file, '-F', 'ip,sym,dso'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (script.status !== 0) return `not summarised: perf script failed (${script.stderr.trim().split('\n').pop()}); the samples are in ${file}`;
  const stacks = parseStacks(script.stdout);
  const go = goTool();
  if (!go) return `not summarised: naming the stripped server's frames needs Go's \`go tool addr2line\`; the samples are in ${file}`;
  const names = nameFrames(go, binary, stacks);
  const byPart = new Map<string, number>();
  const bySelf = new Map<string, number>();
  for (const stack of stacks) {
    const fns = stack.map((f) => names.get(f.ip) ?? (f.sym === '[unknown]' ? `${f.dso}+0x${f.ip.toString(16)}` : `[kernel] ${f.sym}`));
    const p = serverPart(fns);
    byPart.set(p, (byPart.get(p) ?? 0) + 1);
    bySelf.set(fns[0]!, (bySelf.get(fns[0]!) ?? 0) + 1);
  }
  const total = stacks.length;
  const ranked = (m: Map<string, number>, n: number, scale: number, digits: number) =>
    Object.fromEntries([...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => [k, round(v * scale, digits)]));
  return {
    perf_data: file,
    samples: total,
    cpu_seconds: round(total / SAMPLE_HZ, 1),
    cpu_ms_per_event_by_part: ranked(byPart, 40, 1000 / SAMPLE_HZ / events, 2),
    percent_by_part: ranked(byPart, 40, 100 / total, 1),
    percent_by_function_self: ranked(bySelf, 15, 100 / total, 1),
  };
}

/**
 * What a window added to the server's CPU per event against its baseline, by part (ms,
 * largest first; parts within ±0.05 ms left out): `undefined` unless both were profiled.
 */
export function partsAdded(window: unknown, baseline: unknown): Record<string, number> | undefined {
  const parts = (cost: unknown) => {
    const profile = (cost as { temporal_profile?: TemporalProfileSummary | string } | undefined)?.temporal_profile;
    return typeof profile === 'object' ? profile.cpu_ms_per_event_by_part : undefined;
  };
  const a = parts(window);
  const b = parts(baseline);
  if (!a || !b) return undefined;
  const added = [...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, round((a[k] ?? 0) - (b[k] ?? 0), 2)] as const);
  return Object.fromEntries(added.filter(([, v]) => Math.abs(v) > 0.05).sort((x, y) => y[1] - x[1]));
}

export function parseStacks(text: string): Frame[][] {
  const stacks: Frame[][] = [];
  let current: Frame[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s+([0-9a-f]+) (.*?) \((.*)\)$/.exec(line);
    if (m) current.push({ ip: BigInt(`0x${m[1]}`), sym: m[2]!, dso: m[3]! });
    else if (!line.trim() && current.length) {
      stacks.push(current);
      current = [];
    }
  }
  if (current.length) stacks.push(current);
  return stacks;
}

/**
 * Names of the server's own frames. perf gives an unnamed frame's address relative to
 * the file; the executable segment's load address turns it into the one the line table knows.
 */
function nameFrames(go: string, binary: string, stacks: Frame[][]): Map<bigint, string> {
  const base = textLoadBias(binary);
  const ips = [...new Set(stacks.flatMap((s) => s.filter((f) => f.sym === '[unknown]' && f.dso === binary).map((f) => f.ip)))];
  const names = new Map<bigint, string>();
  if (!ips.length) return names;
  const out = spawnSync(go, ['tool', 'addr2line', binary], { input: ips.map((ip) => `0x${(ip + base).toString(16)}`).join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 30 });
  const lines = out.stdout.split('\n');
  ips.forEach((ip, i) => {
    const fn = lines[2 * i];
    if (fn && fn !== '?') names.set(ip, fn);
  });
  return names;
}

/** p_vaddr − p_offset of the first executable PT_LOAD segment of a 64-bit ELF file. */
function textLoadBias(binary: string): bigint {
  const fd = openSync(binary, 'r');
  try {
    const header = Buffer.alloc(64);
    readSync(fd, header, 0, 64, 0);
    const phoff = header.readBigUInt64LE(32);
    const phentsize = header.readUInt16LE(54);
    const phnum = header.readUInt16LE(56);
    const table = Buffer.alloc(phentsize * phnum);
    readSync(fd, table, 0, table.length, Number(phoff));
    for (let i = 0; i < phnum; i++) {
      const at = i * phentsize;
      const PT_LOAD = 1;
      const PF_X = 1;
      if (table.readUInt32LE(at) === PT_LOAD && (table.readUInt32LE(at + 4) & PF_X) !== 0) {
        return table.readBigUInt64LE(at + 16) - table.readBigUInt64LE(at + 8);
      }
    }
    return 0n;
  } finally {
    closeSync(fd);
  }
}

/** The part of the server a stack belongs to: the first rule its frames match. */
export function serverPart(fns: string[]): string {
  const stack = fns.join('\n');
  const visibility = /visibilityQueueTaskExecutor\)\.process(\w+)/.exec(stack);
  if (visibility) return `visibility: ${visibility[1]}`;
  const rpc = /_(History|Matching|Workflow|Admin|Operator)Service_(\w+)_Handler/.exec(stack);
  if (rpc) return `${rpc[1] === 'Workflow' ? 'frontend' : rpc[1]!.toLowerCase()} rpc: ${rpc[2]}`;
  const queue = /\((\*?\w+(?:Queue|Processor)\w*Executor)\)/.exec(stack);
  if (queue) return `history queue: ${queue[1]!.replace('*', '')}`;
  if (/runtime\.gcBgMarkWorker|runtime\.gcAssist|runtime\.bgsweep|runtime\.bgscavenge/.test(stack)) return 'go: garbage collector';
  if (/google\.golang\.org\/grpc|golang\.org\/x\/net\/http2/.test(stack)) return 'grpc transport';
  if (/modernc\.org\/sqlite/.test(stack)) return 'sqlite, other callers';
  if (/service\/history\/queues|common\/tasks\./.test(stack)) return 'history queues: reading and scheduling tasks';
  if (/runtime\.(schedule|findRunnable|mcall|park_m)/.test(stack)) return 'go: scheduler';
  if (fns.every((f) => f.startsWith('[kernel]'))) return 'kernel only';
  if (fns.every((f) => f.startsWith('[kernel]') || f.startsWith('runtime.') || f.includes('+0x'))) return 'go: runtime, other';
  return 'other';
}
