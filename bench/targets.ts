/**
 * What the bench checks at the end: the cost targets of everyday load (CPU per event at
 * 20 events/s, with and without a failing endpoint, and the whole system's peak memory),
 * the burst and latency figures they must not worsen, and that no event was lost.
 * The targets and today's figures: docs/performance.md.
 */
type Results = Record<string, unknown>;

/** The value at `results[scenario][key]…`, or undefined where the path ends early. */
const field = (results: Results, ...path: string[]): unknown => {
  let v: unknown = results;
  for (const k of path) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
};
const numberAt = (results: Results, ...path: string[]) => {
  const v = field(results, ...path);
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

/** The everyday load the CPU targets are defined at. */
export const TARGET_RATE = 20;
const CPU_MS_PER_EVENT = 18;
const CPU_MS_PER_EVENT_ONE_FAILING = 25;
const PEAK_PSS_MB = 700;

/**
 * `now` is null when the scenario did not run (or failed before measuring); `met` is null
 * then, and for a CPU figure measured at another rate than the target's.
 */
export function performanceTargets(results: Results, rate: number) {
  const target = (limit: string, now: number | null, met: (n: number) => boolean, atRate = true) => ({
    target: limit,
    now,
    met: now === null || !atRate ? null : met(now),
    ...(atRate ? {} : { note: `measured at ${rate} events/s; the target is at ${TARGET_RATE} (--rate ${TARGET_RATE})` }),
  });
  const cpu = (scenario: string) => numberAt(results, scenario, 'cost', 'cpu_ms_per_event', 'system_total');
  const atTargetRate = rate === TARGET_RATE;
  // The two scenarios the memory target is defined over; a run of others reports its own peak in each scenario.
  const peaks = ['latency', 'failure'].map((s) => numberAt(results, s, 'peak_pss_mb', 'whole_system')).filter((n): n is number => n !== null);
  return {
    cpu_ms_per_event_at_20_events_per_second: target(`system_total ≤ ${CPU_MS_PER_EVENT}`, cpu('latency'), (n) => n <= CPU_MS_PER_EVENT, atTargetRate),
    cpu_ms_per_event_at_20_events_per_second_one_of_three_failing: target(`system_total ≤ ${CPU_MS_PER_EVENT_ONE_FAILING}`, cpu('failure'), (n) => n <= CPU_MS_PER_EVENT_ONE_FAILING, atTargetRate),
    peak_pss_mb_whole_system: target(`≤ ${PEAK_PSS_MB} over the latency and failure scenarios`, peaks.length ? Math.max(...peaks) : null, (n) => n <= PEAK_PSS_MB),
    // No worse than before a change: compare with runs of the code before it, same hour, interleaved.
    burst_events_per_second: { target: 'no lower than before the change (interleaved runs)', now: numberAt(results, 'burst', 'events_per_second_end_to_end'), met: null },
    latency_p99_ms: { target: 'no higher than before the change (interleaved runs)', now: numberAt(results, 'latency', 'latency_ms', 'p99'), at_events_per_second: rate, met: null },
  };
}

/**
 * Every delivery scenario that ran: no event lost, and every event completed with every URL, as
 * its `api_view` (each event read back through the API) shows, or, for the soak, each ended as
 * its endpoints deserved (bench/lab/soak.ts). A scenario that failed with an error fails it too.
 */
export function correctness(results: Results) {
  const scenarios: Record<string, { lost_events: number | null; all_completed: boolean; error?: true }> = {};
  for (const [name, result] of Object.entries(results as Record<string, Results>)) {
    if ('error' in result) scenarios[name] = { lost_events: null, all_completed: false, error: true };
    else if ('api_view' in result || 'all_as_deserved' in result) scenarios[name] = { lost_events: numberAt(result, 'lost_events'), all_completed: 'api_view' in result ? everyUrlCompleted(result.api_view) : result.all_as_deserved === true };
  }
  const met = Object.values(scenarios).every((s) => s.lost_events === 0 && s.all_completed);
  return { target: 'every event of every delivery scenario completed, none lost', met, scenarios };
}

function everyUrlCompleted(apiView: unknown) {
  const view = apiView as { statuses?: Record<string, number>; events_with_every_url_completed?: number; unreadable?: number };
  const read = Object.values(view.statuses ?? {}).reduce((a, b) => a + b, 0);
  return view.unreadable === 0 && read > 0 && view.statuses?.completed === read && view.events_with_every_url_completed === read;
}
