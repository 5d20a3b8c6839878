/**
 * The rules a delivery run follows, fixed in its input by the starter, so that a run
 * replays by the rules it started with when newer code is deployed. A rule keyed on
 * this costs a run nothing, where each `patched()` call also records a marker and
 * upserts the TemporalChangeVersion search attribute (two history events per run).
 * Runs started by code before rules existed have none in their input (rules 1, told
 * apart with the `patched()` they recorded).
 *
 * The worker that runs a run's tasks must know its rules: roll every worker out before
 * anything that starts runs with a new number, and do not roll workers back past a
 * number while runs started with it are open. A run whose task reaches a worker that
 * does not know its rules fails that task (nondeterminism), and Temporal retries it
 * until a worker that does takes it: it waits, nothing is lost.
 *
 * 2: the first retry always waits in its activity (no `patched()`), and
 *    ShiphookEventStatus holds outcomes only (no `retrying`).
 */
export const DELIVERY_RULES = 2;
